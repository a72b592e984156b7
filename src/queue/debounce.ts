import type { RedisClient } from '../redis/index.js';
import type { DebounceRef, HandlerJobData } from './jobs.js';
import { QUEUE_SCRIPTS } from './scripts.js';

/**
 * Debounce bursts on Redis. The first event of a (handler, key) opens a burst
 * and one delayed job; later events fold into it (latest event by creation
 * time, count) and push its due time to `wait` after the newest, never past
 * `maxWait` after the first. The job, when it starts, takes the burst (one
 * Lua script: events from then on open a new burst) or, if the burst was
 * pushed back, waits until its new due time.
 */

/** What a debounced run gets: the latest event and how many were folded in. */
export interface Burst {
  readonly latest: HandlerJobData;
  readonly count: number;
  /** When the burst's first event was folded in (ms, Redis clock). */
  readonly firstAt: number;
}

export function debounceKeys(prefix: string, handlerId: string, key: string) {
  const base = `${prefix}:debounce:${handlerId}:${key}`;
  return {
    open: base,
    taken: (jobId: string) => `${prefix}:debounce-taken:${jobId}`,
    seen: (jobId: string) => `${prefix}:debounce-seen:${jobId}`,
  };
}

const esc = (s: string) => s.replace(/%/g, '%25').replace(/:/g, '%3A').replace(/\//g, '%2F');

export class DebounceBursts {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #run: ReturnType<typeof QUEUE_SCRIPTS.on>;
  readonly #keepMs: number;

  /** `keepMs`: how long a delivery's fold marker and a taken burst are kept (the dedupe window). */
  constructor(redis: RedisClient, prefix: string, keepMs: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#run = QUEUE_SCRIPTS.on(redis);
    this.#keepMs = keepMs;
  }

  /**
   * Folds one event (its run's job data and job id) into its key's burst.
   * `open`: a new burst, add its job (id `jobId`) delayed by `delayMs`;
   * `folded`: the open burst's job runs it; `repeat`: folded in before.
   */
  async add(
    data: HandlerJobData,
    runJobId: string,
    key: string,
    at: number,
    waitMs: number,
    maxWaitMs: number,
  ): Promise<{ kind: 'open' | 'folded' | 'repeat'; jobId: string; delayMs: number }> {
    const k = debounceKeys(this.#prefix, data.handlerId, key);
    const [kind, jobId, delay] = (await this.#run.debounceAdd(
      [k.open, k.seen(runJobId)],
      [JSON.stringify(data), at, waitMs, maxWaitMs, `b/${esc(data.handlerId)}/${esc(key)}/`, this.#keepMs],
    )) as [number, string, number];
    return { kind: kind === 1 ? 'open' : kind === 0 ? 'folded' : 'repeat', jobId, delayMs: Number(delay) };
  }

  /** The burst of job `jobId` as it starts: run it, wait until its pushed-back due time, or nothing to run. */
  async take(
    handlerId: string,
    ref: DebounceRef,
    jobId: string,
  ): Promise<{ kind: 'run'; burst: Burst } | { kind: 'wait'; ms: number } | { kind: 'gone' }> {
    const k = debounceKeys(this.#prefix, handlerId, ref.key);
    const r = (await this.#run.debounceTake([k.open, k.taken(jobId)], [jobId, this.#keepMs])) as [string, ...string[]];
    if (r[0] === 'wait') return { kind: 'wait', ms: Number(r[1]) };
    if (r[0] !== 'run') return { kind: 'gone' };
    return { kind: 'run', burst: { latest: JSON.parse(r[1] as string) as HandlerJobData, count: Number(r[2]), firstAt: Number(r[3]) } };
  }

  /** The run of a taken burst completed: forget it. */
  async finish(handlerId: string, ref: DebounceRef, jobId: string): Promise<void> {
    await this.#redis.del(debounceKeys(this.#prefix, handlerId, ref.key).taken(jobId));
  }
}
