import { handlerSnapshot, type HandlerSet, type HandlerSetChange } from './set.js';
import { loadHandlerDir, selectHandlers } from './loader.js';

/** What a reload is asked to load, and where it swaps the result in. */
export interface ReloadOptions {
  /** HANDLERS_DIR. */
  readonly dir: string;
  /** HANDLERS: the ids this process runs (default every one). */
  readonly only?: readonly string[] | undefined;
  /** Where settings are parsed from (Switchyard's own secrets are never read). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly set: HandlerSet;
}

/** A reload's outcome: the new version is running, or the previous one still is and why. */
export type ReloadResult =
  ({ readonly ok: true; readonly ms: number } & HandlerSetChange) | { readonly ok: false; readonly ms: number; readonly message: string };

let generation = 0;

/**
 * Loads every module of HANDLERS_DIR again from disk (helpers included) and,
 * when all of them load and the settings of the handlers this process runs
 * parse, swaps the new version into `set` at once. On any failure (a syntax
 * error, with file:line:column and a code frame; a bad export; a duplicate id;
 * a bad setting) nothing changes and the message says why.
 */
export async function reloadHandlers(opts: ReloadOptions): Promise<ReloadResult> {
  const started = performance.now();
  const ms = (): number => Math.round(performance.now() - started);
  try {
    const { handlers: loaded, schedules } = await loadHandlerDir(opts.dir, undefined, ++generation);
    const run = opts.only ? selectHandlers(loaded, opts.only, opts.dir).map((l) => l.handler.id) : undefined;
    // Reloaded schedules run with their new code; their schedulers (interval, pattern) follow at the next worker start.
    const next = handlerSnapshot(
      loaded.map((l) => l.handler),
      run,
      opts.env,
      schedules.map((s) => s.schedule),
    );
    return { ok: true, ...opts.set.replace(next), ms: ms() };
  } catch (err) {
    // HandlerLoadError and HandlerSettingsError messages name the file or the handler and variable.
    return { ok: false, message: err instanceof Error ? err.message : String(err), ms: ms() };
  }
}
