import type { RedisClient } from '../../redis/index.js';
import { parseJobId } from '../../events/index.js';
import { decodeReached } from './reached.js';
import { parseRerunJobId } from '../jobs.js';

/**
 * What a run that sleeps or waits remembers between its attempts, in Redis:
 * one hash per run (`<prefix>:run:<scope>`, scope = the run's job id):
 *
 *   t:<name>  a sleep or wait the run reached: its kind and due time (fixed the
 *             first time it was reached, so a replay parks until the same time;
 *             format in ./reached.ts)
 *   o:<name>  how it ended (`due`, `event` with the event, `timeout`): a replay
 *             returns it at once
 *   m:<key>   the response of an API write the run made, by Idempotency-Key: a
 *             replay returns it instead of writing again, even after the API's
 *             24-hour memory of the key
 *   s:<n>     the value the n-th `ctx.state` write of the run wrote
 *   h:<name>  when a worker first held the sleep or wait past its due time for
 *             a delivery received before it and not fanned out yet (ms;
 *             src/worker/hold.ts: the hold's cap counts from there)
 *   p         while the run is parked: `[queue, name]` (`[queue, name, job id]`
 *             when its job id is not its scope)
 *   x         the run was cancelled by an operator while parked (`switchyard
 *             waits cancel`, the admin's waits page: ./ops.ts): who; a worker
 *             that takes its job after that ends it cancelled before any step
 *
 * The hash lives as long as the run can still wait plus the dedupe window, and
 * survives a dead letter, so `dlq retry` does not wait again for what the run
 * already got. Its values are kept short so that while it is parked it stays a
 * listpack (every value ≤ 64 bytes). The runs parked now are the sorted set
 * `<prefix>:wf:due` (scope by due time, ms) and nothing else: what `switchyard
 * waits` shows is read from their records (`p`, `t:<name>`) and their scopes.
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

/** The sorted set of the runs parked now (scope by due time). */
export const parkedKey = (prefix: string): string => `${prefix}:wf:due`;
/** A run's record. */
export const runKey = (prefix: string, scope: string): string => `${prefix}:run:${scope}`;

/** The record's `p` field of a parked run. */
export function parkedField(p: Pick<ParkedRun, 'scope' | 'queue' | 'name' | 'jobId'>): string {
  return JSON.stringify(p.jobId === p.scope ? [p.queue, p.name] : [p.queue, p.name, p.jobId]);
}

/** A parked run from its scope, due time and record fields (`p` and its `t:<name>`); null when the record is gone. */
function parkedRun(scope: string, dueAt: number, p: string | null, reached: string | null): ParkedRun | null {
  if (p === null || reached === null) return null;
  const [queue, name, jobId] = JSON.parse(p) as [string, string, string?];
  const t = decodeReached(reached, scope, name);
  // A delivery's run (`d/<key>/<handler>`) or a re-run's (`r/<key>/<handler>/<rerun id>`).
  const of = parseJobId(scope) ?? parseRerunJobId(scope);
  const key = t.own ?? t.key;
  return {
    scope,
    name,
    handler: of?.handlerId ?? '',
    deliveryKey: of?.key ?? '',
    kind: t.k === 'sleep' ? 'sleep' : 'wait-for-event',
    dueAt,
    ...(t.ev !== undefined ? { event: t.ev } : {}),
    ...(key !== undefined ? { key } : {}),
    queue,
    jobId: jobId ?? scope,
  };
}

/** Records read per pipeline when listing. */
const CHUNK = 2000;

export class RunRecords {
  private readonly parkedKey: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    this.parkedKey = parkedKey(prefix);
  }

  private key(scope: string): string {
    return runKey(this.prefix, scope);
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
    const flat = [...fields].flat();
    if (parked) flat.push('p', parkedField(parked));
    if (flat.length > 0) {
      ops.push(this.redis.hset(k, ...flat));
      ops.push(this.redis.pexpire(k, Math.max(1, Math.round(keepMs))));
    }
    if (parked) {
      ops.push(this.redis.zadd(this.parkedKey, parked.dueAt, scope));
    } else {
      ops.push(this.redis.zrem(this.parkedKey, scope));
      ops.push(this.redis.hdel(k, 'p'));
    }
    await Promise.all(ops);
  }

  /** The run of `scope` if it is parked now (null when it is not, or its record is gone). */
  async one(scope: string): Promise<ParkedRun | null> {
    const [dueAt, p] = await Promise.all([this.redis.zscore(this.parkedKey, scope), this.redis.hget(this.key(scope), 'p')]);
    if (dueAt === null || p === null) return null;
    const name = (JSON.parse(p) as string[])[1] as string;
    return parkedRun(scope, Number(dueAt), p, await this.redis.hget(this.key(scope), `t:${name}`));
  }

  /** How many runs are parked now. */
  count(): Promise<number> {
    return this.redis.zcard(this.parkedKey);
  }

  /** The runs parked now, soonest due first (one whose record is gone is left out). */
  async parked(): Promise<ParkedRun[]> {
    const flat = await this.redis.zrange(this.parkedKey, '0', '-1', 'WITHSCORES');
    const out: ParkedRun[] = [];
    for (let i = 0; i < flat.length; i += 2 * CHUNK) {
      const chunk: [string, number][] = [];
      for (let j = i; j < Math.min(flat.length, i + 2 * CHUNK); j += 2) chunk.push([flat[j] as string, Number(flat[j + 1])]);
      const ps = await this.pipelined(chunk.map(([scope]) => [this.key(scope), 'p']));
      const names = ps.map((p) => (p === null ? null : ((JSON.parse(p) as string[])[1] as string)));
      const ts = await this.pipelined(chunk.map(([scope], j) => [this.key(scope), `t:${names[j] ?? ''}`]));
      chunk.forEach(([scope, dueAt], j) => {
        const run = parkedRun(scope, dueAt, ps[j] ?? null, ts[j] ?? null);
        if (run) out.push(run);
      });
    }
    return out;
  }

  /** HGETs in one pipeline. */
  private async pipelined(gets: [string, string][]): Promise<(string | null)[]> {
    const pipe = this.redis.pipeline();
    for (const [k, f] of gets) pipe.hget(k, f);
    const res = (await pipe.exec()) ?? [];
    return res.map(([err, v]) => (err ? null : (v as string | null)));
  }
}
