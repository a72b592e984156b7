import type { RedisClient } from '../../redis/connection.js';

/**
 * What a run that sleeps or waits remembers between its attempts, in Redis:
 * one hash per run (`<prefix>:run:<scope>`, scope = the run's job id):
 *
 *   t:<name>  a sleep or wait the run reached: its kind and due time (fixed the
 *             first time it was reached, so a replay parks until the same time)
 *   o:<name>  how it ended (`due`, `event` with the event, `timeout`): a replay
 *             returns it at once
 *   m:<key>   the response of an API write the run made, by Idempotency-Key: a
 *             replay returns it instead of writing again, even after the API's
 *             24-hour memory of the key
 *   s:<n>     the value the n-th `ctx.state` write of the run wrote
 *   h:<name>  when a worker first held the sleep or wait past its due time for
 *             a delivery received before it and not fanned out yet (ms;
 *             src/worker/hold.ts: the hold's cap counts from there)
 *
 * The hash lives as long as the run can still wait plus the dedupe window, and
 * survives a dead letter, so `dlq retry` does not wait again for what the run
 * already got. The runs parked now are listed in `<prefix>:wf:parked`.
 */

/** A run parked in a sleep or a wait (what `switchyard waits` lists). */
export interface ParkedRun {
  /** The run's scope (its job id). */
  readonly scope: string;
  readonly name: string;
  readonly handler: string;
  readonly deliveryKey: string;
  readonly kind: 'sleep' | 'wait-for-event';
  /** When it wakes unless an event wakes it first (ms). */
  readonly dueAt: number;
  /** The event waited for (a wait). */
  readonly event?: string;
  /** The match key (a wait). */
  readonly key?: string;
  /** The handler queue of its job. */
  readonly queue: string;
  readonly jobId: string;
}

export class RunRecords {
  private readonly parkedKey: string;

  constructor(private readonly redis: RedisClient, private readonly prefix: string) {
    this.parkedKey = `${prefix}:wf:parked`;
  }

  private key(scope: string): string {
    return `${this.prefix}:run:${scope}`;
  }

  /** Everything a run remembers (empty for a run that never parked). */
  async load(scope: string): Promise<Map<string, string>> {
    const all = await this.redis.hgetall(this.key(scope));
    return new Map(Object.entries(all));
  }

  /**
   * Adds to what a run remembers, keeping it `keepMs` from now; `parked`: the run parks now (listed),
   * null: it does not (taken off the list).
   */
  async save(scope: string, fields: ReadonlyMap<string, string>, keepMs: number, parked: ParkedRun | null): Promise<void> {
    const k = this.key(scope);
    const ops: Promise<unknown>[] = [];
    if (fields.size > 0) {
      ops.push(this.redis.hset(k, ...[...fields].flat()));
      ops.push(this.redis.pexpire(k, Math.max(1, Math.round(keepMs))));
    }
    ops.push(parked ? this.redis.hset(this.parkedKey, scope, JSON.stringify(parked)) : this.redis.hdel(this.parkedKey, scope));
    await Promise.all(ops);
  }

  /** How many runs are parked now. */
  count(): Promise<number> {
    return this.redis.hlen(this.parkedKey);
  }

  /** The runs parked now, soonest due first. */
  async parked(): Promise<ParkedRun[]> {
    const all = await this.redis.hvals(this.parkedKey);
    return all.map((j) => JSON.parse(j) as ParkedRun).sort((a, b) => a.dueAt - b.dueAt);
  }
}
