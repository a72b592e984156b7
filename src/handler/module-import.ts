import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isHandler } from './define.js';
import { moduleUrl, registerReloadHook } from './fresh-import.js';

/** What a handler module exports, whatever its module system. */
export interface ModuleExports {
  /** The default export (`export default …`, or `module.exports = …` in CommonJS); undefined when there is none. */
  readonly default: unknown;
  /** Named exports (`export const x`, or the keys of a `module.exports` object). */
  readonly named: Readonly<Record<string, unknown>>;
}

const requireHere = createRequire(import.meta.url);
let registration: Promise<void> | undefined;

/**
 * Registers tsx once, for ES modules and CommonJS alike, so `.ts`, `.mts` and
 * `.cts` load with no build step whatever the user project's `"type"` is.
 *
 * Registered globally (not a scoped `tsImport`), so a handler's
 * `import … from 'switchyard'` resolves to the very modules this process runs
 * and `instanceof` checks (ValidationError, NonRetriableError) hold between
 * handler code and the worker. For CommonJS handlers the package's ES module
 * entries (`switchyard`, `switchyard/api`) are put into the require cache
 * first, through Node's own require(esm): tsx's CommonJS hook would otherwise
 * compile a second copy of them.
 */
function registerTypeScript(): Promise<void> {
  registration ??= register();
  return registration;
}

/**
 * Package entry points put into the require cache: those whose classes a
 * handler compares with what the worker throws (`switchyard`, and
 * `switchyard/api` for the error classes of ctx.api calls).
 */
const SHARED_ENTRIES = ['../index.js', '../api/public.js'] as const;

async function register(): Promise<void> {
  for (const relative of SHARED_ENTRIES) {
    const entry = fileURLToPath(new URL(relative, import.meta.url));
    if (!existsSync(entry)) continue;
    try {
      requireHere(entry);
    } catch {
      // A Node without require(esm): a CommonJS handler gets its own copy of the package.
    }
  }
  const [esm, cjs] = await Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]);
  // Node's own resolution, not tsconfig `paths`: 'switchyard' must be the package this process runs.
  esm.register({ tsconfig: false });
  cjs.register();
  registerReloadHook();
}

/** The module system Node uses for `file`: by extension, else the nearest package.json's `"type"`. */
export function moduleFormat(file: string): 'module' | 'commonjs' {
  if (/\.m[jt]s$/.test(file)) return 'module';
  if (/\.c[jt]s$/.test(file)) return 'commonjs';
  return packageType(dirname(file));
}

function packageType(dir: string): 'module' | 'commonjs' {
  for (let at = dir; ; at = dirname(at)) {
    const pkg = join(at, 'package.json');
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type === 'module' ? 'module' : 'commonjs';
      } catch {
        return 'commonjs'; // Node reports the broken package.json itself when it loads the file
      }
    }
    if (dirname(at) === at) return 'commonjs';
  }
}

/**
 * Loads one handler module. CommonJS files (`.cjs`, `.cts`, and `.js`/`.ts`
 * under a package.json without `"type": "module"`) go through require, Node's
 * CommonJS loader, which can require the ES module 'switchyard'; everything
 * else through import. `generation` (a reload, see fresh-import.ts) imports
 * an ES module and the helpers it imports by path afresh; the caller forgets
 * CommonJS modules first.
 */
export async function importModule(file: string, generation?: number): Promise<ModuleExports> {
  // Registered before the first import: Node caches a failed import per URL,
  // so retrying the same URL after registering would fail again.
  await registerTypeScript();
  if (moduleFormat(file) === 'commonjs') return fromCommonJs(createRequire(file)(file));
  const { default: def, ...named } = (await import(moduleUrl(file, generation))) as Record<string, unknown>;
  return { default: def, named };
}

/**
 * `module.exports` as default and named exports: a compiled ES module
 * (`__esModule`, as tsx makes of `export default` in CommonJS) keeps its own
 * split; an object of exports that is not itself a handler (nor shaped like a
 * handler definition) holds named exports; anything else is the default.
 */
function fromCommonJs(exports: unknown): ModuleExports {
  if (typeof exports !== 'object' || exports === null) return { default: exports, named: {} };
  const record = exports as Record<string, unknown>;
  if (record['__esModule'] === true) {
    const { default: def, __esModule: _marker, ...named } = record;
    return { default: def, named };
  }
  if (isHandler(exports) || looksLikeDefinition(exports)) return { default: exports, named: {} };
  return { default: undefined, named: { ...record } };
}

/**
 * Shaped like a handler definition (`{ id, on, handle }`) without
 * defineHandler's marker: an object with a `handle` function or an `on` list.
 * Anything else that is not a handler (a function, a plain object of
 * utilities, a number) is a helper's export.
 */
export function looksLikeDefinition(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || isHandler(v)) return false;
  const { handle, on } = v as { handle?: unknown; on?: unknown };
  return typeof handle === 'function' || Array.isArray(on) || typeof on === 'string';
}
