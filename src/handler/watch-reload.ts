import { resolve } from 'node:path';
import type { HandlerSet } from './set.js';
import { reloadHandlers, type ReloadResult } from './reload.js';
import { watchDir, type DirWatcher } from './watch-dir.js';

export interface HandlerWatchOptions {
  /** HANDLERS_DIR. */
  readonly dir: string;
  /** HANDLERS: the ids this process runs. */
  readonly only?: readonly string[] | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The running worker's handlers. */
  readonly set: HandlerSet;
  /** A line for the person at the terminal (stdout). */
  readonly say: (line: string) => void;
  /** A problem for the person at the terminal (stderr). */
  readonly warn: (text: string) => void;
  readonly debounceMs?: number;
}

/**
 * The line a reload that succeeded prints: the handlers, the schedules (when
 * there are any, or were), what was added and removed, and which schedule
 * changes wait for a restart (job schedulers are set when a worker starts).
 */
export function describeReload(r: Extract<ReloadResult, { ok: true }>): string {
  const s = r.schedules;
  const changes = [
    r.added.length ? `added ${r.added.join(', ')}` : '',
    r.removed.length ? `removed ${r.removed.join(', ')}` : '',
    s.added.length
      ? `added schedule ${s.added.join(', ')} (its first run waits for a restart: schedules are set up when the worker starts)`
      : '',
    s.removed.length ? `removed schedule ${s.removed.join(', ')} (its runs are skipped until a restart removes it)` : '',
    s.retimed.length ? `new timing of schedule ${s.retimed.join(', ')} applies after a restart (its new code runs now)` : '',
  ].filter(Boolean);
  const schedules = s.ids.length || s.removed.length ? `; schedules: ${s.ids.join(', ') || '(none)'}` : '';
  return `reloaded handlers: ${r.ids.join(', ') || '(none)'}${schedules} (${r.ms} ms)${changes.length ? `; ${changes.join('; ')}` : ''}`;
}

/**
 * `switchyard dev`'s watch loop: a change under HANDLERS_DIR (editors' temp
 * files aside) reloads the whole directory from disk and swaps it into the
 * running worker, or keeps the previous handlers and says why. Reloads never
 * overlap: changes during one start another right after it.
 */
export function watchHandlers(opts: HandlerWatchOptions): DirWatcher {
  let running = false;
  let again = false;
  const reload = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        const result = await reloadHandlers(opts);
        if (result.ok) opts.say(describeReload(result));
        else {
          opts.warn(result.message);
          opts.warn(`keeping the previous handlers running (${result.ms} ms); save again to retry`);
        }
      } while (again);
    } finally {
      running = false;
    }
  };
  return watchDir(resolve(opts.dir), () => void reload(), {
    ...(opts.debounceMs !== undefined ? { debounceMs: opts.debounceMs } : {}),
    onError: (err) => opts.warn(`stopped watching ${opts.dir} for changes: ${err.message}; restart \`switchyard dev\``),
  });
}
