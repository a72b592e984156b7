import { LuaScripts } from '../../util/index.js';
import type { RedisClient } from '../../redis/index.js';
import { runFanOutCheck, type AnsweredWait, type ScriptPart } from '../scripts.js';

/**
 * Durable waits in Redis: sleeps and waits for an event of a match key
 * (`conversation:42`, `contact:7`), answered without the race of the workflow
 * engines (an event that arrives between a run's trigger and the moment its
 * wait is registered). Each match key keeps a short log of its recent events;
 * registering a wait looks back in that log and registers in the same script,
 * and an event appends to the log and answers the pending waits in the same
 * script, so each event is seen by exactly one of the two (`./lua/`).
 *
 * A wait's state moves once: `pending` → `matched` (an event answered it),
 * `timeout` (its time came first) or `slept` (a sleep's time came). The ids of
 * waits that left `pending` are queued in `wake` until the run is resumed
 * ({@link WaitStore.woken}, {@link WaitStore.ack}), so a process that dies in
 * between loses no wake-up.
 *
 * A pending wait is one field of `wait:state` (its id → its state as JSON) and,
 * unless it is a sleep, one of `wait:on:<key>` (its id → the event name). Its
 * due time is kept in its state only: it is ended by its own run, which BullMQ
 * promotes at that time ({@link WaitStore.settle}).
 */

export const WAIT_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), [
  'waitRegister',
  'waitSettle',
  'waitForget',
  'runCancel',
  'runWake',
]);
const SCRIPTS = WAIT_SCRIPTS;

/** `cancelled`: a run's cancelOn entry that a matching event answered. */
export type WaitStatus = 'pending' | 'matched' | 'timeout' | 'slept' | 'cancelled';

/** A wait as stored (decoded). */
export interface WaitState {
  readonly status: WaitStatus;
  /** The match key (empty for a sleep). */
  readonly key: string;
  /** The event waited for ('' for a sleep). */
  readonly event: string;
  /** Who to wake (the run's reference, e.g. its job id). */
  readonly run: string;
  /** When a pending wait times out (ms), if it does. */
  readonly dueAt?: number;
  /** A run's cancelOn entry (a match cancels the run). */
  readonly cancel?: boolean;
  /** The event that answered a matched wait. */
  readonly match?: { readonly deliveryKey: string; readonly receivedAt: number; readonly body: string };
}

export interface WaitRegistration {
  /** Deterministic per run and wait (a resumed run registers the same id and gets its state). */
  readonly id: string;
  /** The match key: the run's own event's key (`conversation:42`); '' for a sleep. */
  readonly key: string;
  /** The event name waited for; omitted for a sleep. */
  readonly event?: string;
  /** Events received after this instant (ms) match: the lookback's start. */
  readonly since: number;
  /** When the wait ends without a match (ms), if it does; a sleep's wake-up time. */
  readonly dueAt: number | null;
  readonly run: string;
  /** A run's cancelOn entry: a matching event makes it `cancelled` (instead of `matched`). */
  readonly cancel?: boolean;
}

/** A run an event woke: the wait id it answered and the run's reference. */
export type WokenRun = AnsweredWait;

export interface WaitEvent {
  readonly deliveryKey: string;
  readonly name: string;
  readonly receivedAt: number;
  /** The delivery's body (what a matched wait returns). */
  readonly body: string;
  /** Every match key the event has (its conversation and contact). */
  readonly keys: readonly string[];
}

/** As stored: `q` instead of `run` when the run is `<q>|<the id up to its first ':'>` (waitRegister). */
interface Raw {
  s: WaitStatus;
  k: string;
  ev: string;
  run?: string;
  q?: string;
  due?: number;
  d?: string;
  at?: number;
  b?: string;
  c?: number;
}

function decode(id: string, raw: string): WaitState {
  const r = JSON.parse(raw) as Raw;
  return {
    status: r.s,
    key: r.k,
    event: r.ev,
    run: r.run ?? `${r.q ?? ''}|${id.split(':', 1)[0] as string}`,
    ...(r.due !== undefined ? { dueAt: r.due } : {}),
    ...(r.c === 1 ? { cancel: true } : {}),
    ...(r.d !== undefined ? { match: { deliveryKey: r.d, receivedAt: r.at ?? 0, body: r.b ?? '' } } : {}),
  };
}

export class WaitStore {
  private readonly run;
  private readonly k;

  /** `retentionMs`: how long a key's events stay in its log for lookbacks. */
  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly retentionMs: number,
  ) {
    this.run = SCRIPTS.on(redis);
    this.k = {
      state: `${prefix}:wait:state`,
      wake: `${prefix}:wait:wake`,
      onPrefix: `${prefix}:wait:on:`,
      base: `${prefix}:wait:`,
      names: `${prefix}:wait:names`,
      on: (key: string) => `${prefix}:wait:on:${key}`,
      log: (key: string) => `${prefix}:wait:log:${key}`,
      body: (key: string) => `${prefix}:wait:body:${key}`,
    };
  }

  /**
   * Registers a wait (or a sleep, or a cancelOn entry), or gives its state when it exists; a wait a logged event answers
   * is `matched` (`cancelled`) at once.
   */
  async register(w: WaitRegistration): Promise<WaitState> {
    const { k } = this;
    const raw = (await this.run.waitRegister(
      [k.state, k.on(w.key), k.log(w.key), k.body(w.key), k.names],
      [w.id, w.event ?? '', w.since, w.dueAt ?? '', w.key, w.run, w.cancel ? '1' : ''],
    )) as string;
    return decode(w.id, raw);
  }

  /**
   * Logs an event under each of its keys and answers the waits pending on them, in one script call;
   * the runs it woke. `onlyWatched`: do nothing unless the event's name is watched ({@link watch}).
   */
  async deliver(e: WaitEvent, now = Date.now(), onlyWatched = false): Promise<WokenRun[]> {
    if (e.keys.length === 0 && !onlyWatched) return [];
    const [reply] = await runFanOutCheck(this.redis, [{ claim: null, waits: this.eventPart(e, now, onlyWatched) }]);
    return reply?.woken ?? [];
  }

  /**
   * The event's keys and arguments in the fan-out check script (src/queue/scripts.ts runFanOutCheck, alone
   * or after a change claim's part). `sent` false: the name is taken for unwatched and neither the body nor
   * the match keys go (`e.body` and `e.keys` are not read); the script answers `need` when it is watched.
   */
  eventPart(e: WaitEvent, now: number, onlyWatched: boolean, sent = true): ScriptPart {
    const { k } = this;
    const watched = onlyWatched ? '1' : '';
    const tail = sent
      ? [e.body, now, this.retentionMs, watched, '1', e.keys.length, ...e.keys]
      : ['', now, this.retentionMs, watched, '', 0];
    return { keys: [k.state, k.wake, k.names], args: [k.base, e.deliveryKey, e.name, e.receivedAt, ...tail] };
  }

  /** {@link deliver}, counting the waits it answered. */
  async event(e: WaitEvent, now = Date.now()): Promise<number> {
    return (await this.deliver(e, now)).length;
  }

  /**
   * Marks event names as watched: their deliveries are logged and matched (cancelOn names at start-up; a wait's name at
   * its registration).
   */
  async watch(names: readonly string[]): Promise<void> {
    // HSETNX: a name some function-matched wait logs under `any:<name>` too ('2') stays so.
    await Promise.all(names.map((n) => this.redis.hsetnx(this.k.names, n, '1')));
  }

  /** A wait's state, ending it first when its time came (`timeout`; a sleep `slept`); null when there is none. */
  async settle(id: string, now = Date.now()): Promise<WaitState | null> {
    const raw = (await this.run.waitSettle([this.k.state], [id, now, this.k.onPrefix])) as string | null;
    return raw ? decode(id, raw) : null;
  }

  /** The states of several waits (null for one that does not exist). */
  async states(ids: readonly string[]): Promise<(WaitState | null)[]> {
    if (ids.length === 0) return [];
    const raws = await this.redis.hmget(this.k.state, ...ids);
    return raws.map((r, i) => (r ? decode(ids[i] as string, r) : null));
  }

  /** Waits that left `pending` and whose run is not resumed yet (oldest first). */
  async woken(limit = 100): Promise<{ id: string; state: WaitState }[]> {
    const ids = await this.redis.zrange(this.k.wake, '0', String(limit - 1));
    if (ids.length === 0) return [];
    const raws = await this.redis.hmget(this.k.state, ...ids);
    return ids.flatMap((id, i) => (raws[i] ? [{ id, state: decode(id, raws[i]) }] : []));
  }

  /** The run of a woken wait was resumed. */
  async ack(id: string): Promise<void> {
    await this.redis.zrem(this.k.wake, id);
  }

  async get(id: string): Promise<WaitState | null> {
    const raw = await this.redis.hget(this.k.state, id);
    return raw ? decode(id, raw) : null;
  }

  /** Forgets a finished run's waits: their state, their registration on their key and wake-up. */
  async forget(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.run.waitForget([this.k.state, this.k.wake], [this.k.onPrefix, ...ids]);
  }

  /** Wake-ups queued before `before` (ms) and not yet acknowledged: runs whose waker may have died. */
  async stale(before: number, limit = 100): Promise<{ id: string; state: WaitState }[]> {
    const ids = await this.redis.zrangebyscore(this.k.wake, '-inf', String(before), 'LIMIT', 0, limit);
    if (ids.length === 0) return [];
    const raws = await this.redis.hmget(this.k.state, ...ids);
    const out: { id: string; state: WaitState }[] = [];
    for (const [i, id] of ids.entries()) {
      const raw = raws[i];
      if (raw) out.push({ id, state: decode(id, raw) });
      else await this.redis.zrem(this.k.wake, id);
    }
    return out;
  }
}
