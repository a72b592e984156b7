import { createRequire, register } from 'node:module';
import { sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Loading handler modules again in a running process (`switchyard dev`).
 *
 * ES modules cannot be evicted from Node's cache, so a reload imports each
 * handler under a new URL (`file.ts?switchyard-reload=N`). A resolve hook
 * carries that query from a module to what it imports by path (`./helper.js`,
 * `../lib/x.ts`), so helpers load afresh too; bare specifiers (`switchyard`,
 * `zod`) and anything under node_modules keep their one instance, so classes
 * such as ValidationError stay the ones the worker throws. Each reload keeps
 * its modules in memory: fine for a development session.
 */
export const RELOAD_PARAM = 'switchyard-reload';

/** The resolve hook (runs on the loader thread; plain JavaScript, no imports). */
const HOOKS = `
const P = ${JSON.stringify(RELOAD_PARAM)};
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const parent = context.parentURL;
  if (!parent || !parent.startsWith('file:') || !resolved.url.startsWith('file:')) return resolved;
  if (!/^(\\.{1,2}\\/|\\/|file:)/.test(specifier)) return resolved;
  const generation = new URL(parent).searchParams.get(P);
  if (generation === null) return resolved;
  const url = new URL(resolved.url);
  if (url.pathname.includes('/node_modules/') || url.searchParams.has(P)) return resolved;
  url.searchParams.set(P, generation);
  return { ...resolved, url: url.href };
}
`;

let registered = false;

/** Registers the resolve hook once (after tsx's, so it runs first and asks tsx to resolve). */
export function registerReloadHook(): void {
  if (registered) return;
  registered = true;
  register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
}

/** The URL an ES module is imported under: plain at start-up, `?switchyard-reload=N` for reload N. */
export function moduleUrl(file: string, generation?: number): string {
  const url = pathToFileURL(file);
  if (generation !== undefined) url.searchParams.set(RELOAD_PARAM, String(generation));
  return url.href;
}

/**
 * Forgets the CommonJS modules under `root` (outside its node_modules), so
 * the next require loads them and the helpers they require from disk again.
 */
export function forgetCommonJs(root: string): void {
  const cache = createRequire(import.meta.url).cache;
  const prefix = root.endsWith(sep) ? root : `${root}${sep}`;
  for (const key of Object.keys(cache)) {
    if (key.startsWith(prefix) && !key.includes(`${sep}node_modules${sep}`)) Reflect.deleteProperty(cache, key);
  }
}
