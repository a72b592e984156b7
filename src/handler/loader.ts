import { readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { closest } from '../util/index.js';
import { isHandler, type Handler } from './define.js';
import { isSchedule, type Schedule } from './schedule.js';
import { describeLoadFailure } from './load-error.js';
import { forgetCommonJs } from './fresh-import.js';
import { importModule, looksLikeDefinition, type ModuleExports } from './module-import.js';

/** A handler module that cannot be used; start-up stops with this message (it names the file). */
export class HandlerLoadError extends Error {
  readonly code = 'handler_load';
  constructor(
    message: string,
    readonly file: string | null,
  ) {
    super(message);
    this.name = 'HandlerLoadError';
  }
}

export interface LoadedHandler {
  readonly handler: Handler;
  readonly file: string;
}

/** What `loadHandlerDir` found: the handlers, and the modules beside them that export none (helpers). */
export interface HandlerDir {
  readonly handlers: LoadedHandler[];
  readonly helpers: string[];
  /** The schedules (`export default defineSchedule(…)`); never narrowed by HANDLERS. */
  readonly schedules: LoadedSchedule[];
}

export interface LoadedSchedule {
  readonly schedule: Schedule;
  readonly file: string;
}

const MODULE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SKIP = /(\.d\.[mc]?ts|\.test\.[mc]?[jt]s|\.spec\.[mc]?[jt]s)$/;

/** The file as messages name it: relative to the working directory when inside it. */
function shown(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** The module files of HANDLERS_DIR; a missing or unreadable directory stops start-up. */
function moduleFiles(dir: string, root: string): string[] {
  let stat;
  try {
    stat = statSync(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new HandlerLoadError(
        `HANDLERS_DIR ${dir} does not exist (${root}); ` +
          'create it and put the handler modules in it, or set HANDLERS_DIR to the directory that holds them',
        null,
      );
    }
    throw new HandlerLoadError(`cannot read HANDLERS_DIR ${dir} (${root}): ${(err as Error).message}`, null);
  }
  if (!stat.isDirectory())
    throw new HandlerLoadError(`HANDLERS_DIR ${dir} (${root}) is a file; set it to the directory that holds the handler modules`, null);
  try {
    return readdirSync(root)
      .filter((n) => MODULE.test(n) && !SKIP.test(n) && statSync(join(root, n)).isFile())
      .sort();
  } catch (err) {
    throw new HandlerLoadError(`cannot read HANDLERS_DIR ${dir} (${root}): ${(err as Error).message}`, null);
  }
}

const DEFINE = 'export default defineHandler({ id, on, handle }) (CommonJS: module.exports = defineHandler({ id, on, handle }))';

/**
 * Loads every `.ts`/`.mts`/`.cts`/`.js`/`.mjs`/`.cjs` module in `dir`, whatever
 * the project's module type. A module whose default export is a handler is a
 * handler; one that exports no handler (no default export, or a default that is
 * a function, a plain object of utilities or a value) is a helper beside them.
 * A missing directory, a module that fails to import (syntax errors with
 * file:line:column and a code frame), a default export shaped like a handler
 * definition but not made with defineHandler, a handler exported under a name
 * instead of as the default,
 * a duplicate id, or an id in `only` that no module defines, stops start-up
 * with a message naming the file and what is expected.
 * `generation` (a reload in `switchyard dev`) loads every module, and the
 * helpers it imports by path, from disk again instead of from Node's caches.
 */
export async function loadHandlerDir(dir: string, only?: readonly string[], generation?: number): Promise<HandlerDir> {
  const root = resolve(dir);
  if (generation !== undefined) forgetCommonJs(root);
  const loaded: LoadedHandler[] = [];
  const helpers: string[] = [];
  const schedules: LoadedSchedule[] = [];
  for (const name of moduleFiles(dir, root)) {
    const file = join(root, name);
    let mod: ModuleExports;
    try {
      mod = await importModule(file, generation);
    } catch (err) {
      throw new HandlerLoadError(describeLoadFailure(file, shown(file), err), file);
    }
    const exported = mod.default;
    if (isSchedule(exported)) {
      const twin = loaded.find((l) => l.handler.id === exported.id)?.file ?? schedules.find((l) => l.schedule.id === exported.id)?.file;
      if (twin) {
        const duplicate = `schedule id "${exported.id}" is already defined in ${shown(twin)}; ids of handlers and schedules must be unique`;
        throw new HandlerLoadError(`${shown(file)}: ${duplicate}`, file);
      }
      schedules.push({ schedule: exported, file });
      continue;
    }
    if (!isHandler(exported)) {
      if (looksLikeDefinition(exported)) {
        throw new HandlerLoadError(
          `${shown(file)}: the default export is a plain object, not a handler: wrap it in defineHandler; write ${DEFINE}`,
          file,
        );
      }
      const named = Object.entries(mod.named)
        .filter(([, v]) => isHandler(v) || looksLikeDefinition(v))
        .map(([k]) => k);
      if (named.length > 0) {
        throw new HandlerLoadError(
          `${shown(file)}: ${named.map((n) => `"${n}"`).join(', ')} ${named.length > 1 ? 'are named exports' : 'is a named export'}, ` +
            `but only the default export is loaded as a handler; write ${DEFINE}, one handler per module`,
          file,
        );
      }
      helpers.push(file);
      continue;
    }
    const twin = loaded.find((l) => l.handler.id === exported.id)?.file ?? schedules.find((l) => l.schedule.id === exported.id)?.file;
    if (twin)
      throw new HandlerLoadError(
        `${shown(file)}: handler id "${exported.id}" is already defined in ${shown(twin)}; ids must be unique`,
        file,
      );
    loaded.push({ handler: exported, file });
  }
  return { handlers: only ? selectHandlers(loaded, only, root) : loaded, helpers, schedules };
}

/** {@link loadHandlerDir}'s handlers only. */
export async function loadHandlers(dir: string, only?: readonly string[], generation?: number): Promise<LoadedHandler[]> {
  return (await loadHandlerDir(dir, only, generation)).handlers;
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
      const suggestion = hint ? `; did you mean "${hint}"?` : ids.length ? `; loaded: ${ids.join(', ')}` : '';
      throw new HandlerLoadError(`HANDLERS names "${id}", which no module in ${dir} defines${suggestion}`, null);
    }
  }
  return loaded.filter((l) => only.includes(l.handler.id));
}
