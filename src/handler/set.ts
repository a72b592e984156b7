import type { Handler } from './define.js';
import { describeSchedule, type Schedule } from './schedule.js';
import { readHandlerSettings, type SettingsById } from './settings.js';

/** One version of the handler modules, as fan-out and the job processor read it. */
export interface HandlerSnapshot {
  /** Every handler module: fan-out creates a job for each subscriber, whoever runs it. */
  readonly all: readonly Handler[];
  /** The handlers this process runs, by id. */
  readonly handlers: ReadonlyMap<string, Handler>;
  /** Each of those handlers' parsed settings (`ctx.settings`), by id. */
  readonly settings: SettingsById;
  /** The schedules of the handler modules (every worker process runs them), their settings under their ids in `settings`. */
  readonly schedules: readonly Schedule[];
}

/** What a {@link HandlerSet.replace} changed, by handler id (of the handlers this process runs), and by schedule id. */
export interface HandlerSetChange {
  readonly ids: readonly string[];
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /**
   * The schedules of the new version, those added and removed, and those whose timing (`every`, `cron`,
   * `timezone`) changed: a running worker's job schedulers are set when it starts, so those three wait for a
   * restart (an added schedule has no run before; a removed one's runs are skipped; the old timing holds).
   */
  readonly schedules: {
    readonly ids: readonly string[];
    readonly added: readonly string[];
    readonly removed: readonly string[];
    readonly retimed: readonly string[];
  };
}

/**
 * A snapshot of the handler modules for `all`, running the ids in `run`
 * (default every one), with settings parsed from `env`. Throws
 * HandlerSettingsError for a bad or missing setting of a handler it runs.
 */
export function handlerSnapshot(
  all: readonly Handler[],
  run: readonly string[] | undefined,
  env: Readonly<Record<string, string | undefined>>,
  schedules: readonly Schedule[] = [],
): HandlerSnapshot {
  const handlers = new Map(all.filter((h) => !run || run.includes(h.id)).map((h) => [h.id, h]));
  return { all, handlers, settings: readHandlerSettings([...handlers.values(), ...schedules], env), schedules };
}

/**
 * The handler modules a worker runs, replaceable while it runs (`switchyard
 * dev` reloads them): each read of {@link current} sees one whole version, so
 * a job that has started keeps the version it started with.
 */
export class HandlerSet {
  #current: HandlerSnapshot;
  readonly #listeners = new Set<(change: HandlerSetChange, next: HandlerSnapshot) => void>();

  constructor(initial: HandlerSnapshot) {
    this.#current = initial;
  }

  /** The version new jobs use. */
  current(): HandlerSnapshot {
    return this.#current;
  }

  /** Swaps in `next` at once; says which ids it added and removed. */
  replace(next: HandlerSnapshot): HandlerSetChange {
    const before = new Set(this.#current.handlers.keys());
    const ids = [...next.handlers.keys()];
    const timing = new Map(this.#current.schedules.map((s) => [s.id, describeSchedule(s)]));
    const sched = next.schedules.map((s) => s.id);
    this.#current = next;
    const change: HandlerSetChange = {
      ids,
      added: ids.filter((id) => !before.has(id)),
      removed: [...before].filter((id) => !next.handlers.has(id)),
      schedules: {
        ids: sched,
        added: sched.filter((id) => !timing.has(id)),
        removed: [...timing.keys()].filter((id) => !sched.includes(id)),
        retimed: next.schedules.filter((s) => timing.has(s.id) && timing.get(s.id) !== describeSchedule(s)).map((s) => s.id),
      },
    };
    for (const listener of this.#listeners) listener(change, next);
    return change;
  }

  /** Calls `listener` after each {@link replace}; the returned function stops it. */
  onReplace(listener: (change: HandlerSetChange, next: HandlerSnapshot) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }
}
