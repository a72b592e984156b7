import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { closest } from '../events/catalogue.js';
import { isHandler, type Handler } from '../handler.js';

/** A handler module that cannot be used; start-up stops with this message (it names the file). */
export class HandlerLoadError extends Error {
  readonly code = 'handler_load';
  constructor(message: string, readonly file: string | null) {
    super(message);
    this.name = 'HandlerLoadError';
  }
}

export interface LoadedHandler {
  readonly handler: Handler;
  readonly file: string;
}

const MODULE = /\.(ts|mts|js|mjs)$/;
const SKIP = /(\.d\.ts|\.test\.[mc]?[jt]s|\.spec\.[mc]?[jt]s)$/;

let tsxRegistered = false;

/**
 * Imports a module; `.ts` through tsx when the runtime cannot load TypeScript
 * itself, so users need no build step. tsx is registered globally (not a
 * scoped `tsImport`), so a handler's `import … from 'switchyard'` resolves to
 * the very modules this process runs, and `instanceof` checks (ValidationError,
 * UnrecoverableError) hold between handler code and the worker.
 */
async function importModule(file: string): Promise<Record<string, unknown>> {
  // Registered before the first `.ts` import: Node caches a failed import per URL,
  // so retrying the same URL after registering would fail again.
  if (/\.m?ts$/.test(file) && !tsxRegistered) {
    const { register } = await import('tsx/esm/api');
    // Node's own resolution, not tsconfig `paths`: 'switchyard' must be the package this process runs.
    register({ tsconfig: false });
    tsxRegistered = true;
  }
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

/**
 * Loads every `.ts`/`.js` module in `dir` whose default export is a handler.
 * A module that fails to import, a default export that is not a handler
 * (when the module looks like one), a duplicate id, or an id in `only` that no
 * module defines, stops start-up with a message naming the file.
 */
export async function loadHandlers(dir: string, only?: readonly string[]): Promise<LoadedHandler[]> {
  const root = resolve(dir);
  let names: string[];
  try {
    names = readdirSync(root).filter((n) => MODULE.test(n) && !SKIP.test(n) && statSync(join(root, n)).isFile()).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new HandlerLoadError(`cannot read HANDLERS_DIR ${root}: ${(err as Error).message}`, null);
  }
  const loaded: LoadedHandler[] = [];
  for (const name of names) {
    const file = join(root, name);
    let mod: Record<string, unknown>;
    try {
      mod = await importModule(file);
    } catch (err) {
      throw new HandlerLoadError(`${file}: ${(err as Error).message.split('\n')[0]}`, file);
    }
    const exported = mod['default'];
    if (exported === undefined) continue; // a helper module beside the handlers
    if (!isHandler(exported)) {
      throw new HandlerLoadError(`${file}: the default export is not a handler; export default defineHandler({ id, on, handle })`, file);
    }
    const twin = loaded.find((l) => l.handler.id === exported.id);
    if (twin) throw new HandlerLoadError(`${file}: handler id "${exported.id}" is already defined in ${twin.file}; ids must be unique`, file);
    loaded.push({ handler: exported, file });
  }
  return only ? selectHandlers(loaded, only, root) : loaded;
}

/**
 * The handlers named in HANDLERS; an id no module defines stops start-up
 * (with a did-you-mean). Fan-out still uses every loaded module, so a
 * process that runs a subset never drops the others' jobs.
 */
export function selectHandlers(loaded: readonly LoadedHandler[], only: readonly string[], dir: string): LoadedHandler[] {
  const ids = loaded.map((l) => l.handler.id);
  for (const id of only) {
    if (!ids.includes(id)) {
      const hint = closest(id, ids);
      throw new HandlerLoadError(`HANDLERS names "${id}", which no module in ${dir} defines${hint ? `; did you mean "${hint}"?` : ids.length ? `; loaded: ${ids.join(', ')}` : ''}`, null);
    }
  }
  return loaded.filter((l) => only.includes(l.handler.id));
}
