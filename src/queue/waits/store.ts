import { LuaScripts } from '../../util/lua.js';
import type { RedisClient } from '../../redis/connection.js';

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
 */

const SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), ['waitRegister', 'waitEvent', 'waitExpire']);

export type WaitStatus = 'pending' | 'matched' | 'timeout' | 'slept';

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
}

export interface WaitEvent {
  readonly deliveryKey: string;
  readonly name: string;
  readonly receivedAt: number;
  /** The delivery's body (what a matched wait returns). */
  readonly body: string;
  /** Every match key the event has (its conversation and contact). */
  readonly keys: readonly string[];
}

interface Raw { s: WaitStatus; k: string; ev: string; run: string; due?: number; d?: string; at?: number; b?: string }

function decode(raw: string): WaitState {
  const r = JSON.parse(raw) as Raw;
  return {
    status: r.s, key: r.k, event: r.ev, run: r.run,
    ...(r.due !== undefined ? { dueAt: r.due } : {}),
    ...(r.d !== undefined ? { match: { deliveryKey: r.d, receivedAt: r.at ?? 0, body: r.b ?? '' } } : {}),
  };
}

export class WaitStore {
  private readonly run;
  private readonly k;

  /** `retentionMs`: how long a key's events stay in its log for lookbacks. */
  constructor(private readonly redis: RedisClient, prefix: string, private readonly retentionMs: number) {
    this.run = SCRIPTS.on(redis);
    this.k = {
      state: `${prefix}:wait:state`,
      due: `${prefix}:wait:due`,
      wake: `${prefix}:wait:wake`,
      onPrefix: `${prefix}:wait:on:`,
      on: (key: string) => `${prefix}:wait:on:${key}`,
      log: (key: string) => `${prefix}:wait:log:${key}`,
      body: (key: string) => `${prefix}:wait:body:${key}`,
    };
  }

  /** Registers a wait (or a sleep), or gives its state when it exists; a wait a logged event answers is `matched` at once. */
  async register(w: WaitRegistration): Promise<WaitState> {
    const { k } = this;
    const raw = await this.run.waitRegister(
      [k.state, k.due, k.on(w.key), k.log(w.key), k.body(w.key)],
      [w.id, w.event ?? '', w.since, w.dueAt ?? '', w.key, w.run],
    ) as string;
    return decode(raw);
  }

  /** Logs an event under each of its keys and answers the waits pending on them; how many it answered. */
  async event(e: WaitEvent, now = Date.now()): Promise<number> {
    const { k } = this;
    let answered = 0;
    for (const key of e.keys) {
      const n = await this.run.waitEvent(
        [k.state, k.due, k.on(key), k.log(key), k.body(key), k.wake],
        [e.deliveryKey, e.name, e.receivedAt, e.body, now, this.retentionMs],
      ) as number;
      if (n > 0) answered += n;
    }
    return answered;
  }

  /** Ends up to `limit` waits and sleeps due by `now`; their ids (now queued to be woken). */
  async expire(now = Date.now(), limit = 1000): Promise<string[]> {
    const { k } = this;
    return await this.run.waitExpire([k.state, k.due, k.wake], [now, limit, k.onPrefix]) as string[];
  }

  /** Waits that left `pending` and whose run is not resumed yet (oldest first). */
  async woken(limit = 100): Promise<{ id: string; state: WaitState }[]> {
    const ids = await this.redis.zrange(this.k.wake, '0', String(limit - 1));
    if (ids.length === 0) return [];
    const raws = await this.redis.hmget(this.k.state, ...ids);
    return ids.flatMap((id, i) => (raws[i] ? [{ id, state: decode(raws[i]) }] : []));
  }

  /** The run of a woken wait was resumed. */
  async ack(id: string): Promise<void> {
    await this.redis.zrem(this.k.wake, id);
  }

  async get(id: string): Promise<WaitState | null> {
    const raw = await this.redis.hget(this.k.state, id);
    return raw ? decode(raw) : null;
  }

  /** Forgets a finished run's waits. */
  async forget(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.redis.hdel(this.k.state, ...ids);
  }
}
