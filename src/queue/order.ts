import type { JobsOptions } from 'bullmq';
import type { RedisClient } from '../redis/index.js';
import type { Priority } from '../util/index.js';
import type { HandlerJobData, OrderRef } from './jobs.js';
import { decodeInboxItem } from './inbox-item.js';
import { ingestKeys } from './names.js';
import { QUEUE_SCRIPTS } from './scripts.js';

/**
 * Per-key order of an ordered handler's runs, on Redis (BullMQ's open-source
 * edition has no groups). Each (handler, key) has a line: a sorted set of its
 * runs by the event's creation time, ties by receipt. Only the line's head has
 * a job in a handler queue; the others wait in Redis with their job payload.
 * When the head is over (completed, skipped, or dead-lettered and released),
 * the next one becomes the head and its job is added. A retried, stalled or
 * SIGKILLed head keeps its place (its job id stays the head), so later runs
 * wait; every step is one Lua script, so processes never see half of one.
 */

/** A job to add to a handler queue when its run reaches the head of its line. */
export interface QueuedJob {
  readonly priority: Priority;
  readonly name: string;
  readonly data: HandlerJobData;
  readonly opts: JobsOptions & { jobId: string };
}

/**
 * Hands a line over to its next run: adds its job to the handler queue of its
 * priority (a no-op when a job with its id exists); `parked`: the job exists,
 * waiting parked (delayed): promote it. Flow control (flow.ts) passes its one
 * hand-over (FlowJobs.handOver); nothing else releases a line.
 */
export type AddJob = (job: QueuedJob, parked?: boolean) => Promise<void>;

export function orderKeys(prefix: string, handlerId: string, key: string) {
  const base = `${prefix}:order:${handlerId}:${key}`;
  return {
    line: `${base}:line`,
    state: base,
    backlog: `${prefix}:order-backlog:${handlerId}`,
    done: (jobId: string) => `${prefix}:order-done:${jobId}`,
  };
}

/** The line member of a run: receipt time first (ties of creation time go by receipt), then the job id. */
export function orderMember(receivedAtMs: number, jobId: string): string {
  return `${String(Math.max(0, Math.floor(receivedAtMs))).padStart(15, '0')}|${jobId}`;
}

/** What a run of an ordered handler may do as it starts. */
export type OrderClaim =
  /** Run now; `lastAppliedAt`: creation time (ms) of the last event applied for the key, or null. */
  | { readonly kind: 'run'; readonly lastAppliedAt: number | null }
  /** This run already finished (its worker died before completing the job): complete it without running. */
  | { readonly kind: 'completed' }
  /** Another run goes first: wait, parked, until this one is the head (its job is promoted then). */
  | { readonly kind: 'park' }
  /** A delivery received earlier is still to be fanned out (it may be an earlier event of this key): wait `ms`, ask again. */
  | { readonly kind: 'hold'; readonly ms: number };

export interface OrderGateOptions {
  /** How long a run's done marker is kept, so a repeated fan-out of its delivery adds nothing (the dedupe window). */
  readonly doneTtlMs: number;
  /** How long an idle key's state (the last applied time, for skipStale) is kept. */
  readonly idleTtlMs?: number;
  /**
   * The longest a run waits, after its delivery's receipt, for deliveries received before it that
   * are still to be fanned out (default 60 s; a fan-out lost with a killed worker is redone within it).
   */
  readonly holdMs?: number;
}

const DAY = 86_400_000;

/** The order lines of one prefix, on one connection. */
export class OrderGate {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #run: ReturnType<typeof QUEUE_SCRIPTS.on>;
  readonly #doneTtlMs: number;
  readonly #idleTtlMs: number;
  readonly #pending: string;
  readonly #holdMs: number;
  #stranded: { at: number; oldest: Promise<number | null> } = { at: 0, oldest: Promise.resolve(null) };

  constructor(redis: RedisClient, prefix: string, opts: OrderGateOptions) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#run = QUEUE_SCRIPTS.on(redis);
    this.#doneTtlMs = opts.doneTtlMs;
    this.#idleTtlMs = opts.idleTtlMs ?? Math.max(30 * DAY, opts.doneTtlMs);
    this.#pending = ingestKeys(prefix).pendingFanOut;
    this.#holdMs = opts.holdMs ?? 60_000;
  }

  #keys(handlerId: string, ref: OrderRef) {
    return orderKeys(this.#prefix, handlerId, ref.key);
  }

  /**
   * Puts a run in its key's line (fan-out). Returns `add` when it is the head
   * (add its job now), `wait` when it waits behind another run, `done` when
   * this delivery's run was already in the line once (a repeated fan-out).
   */
  async enqueue(job: QueuedJob, ref: OrderRef): Promise<'add' | 'wait' | 'done'> {
    const k = this.#keys(job.data.handlerId, ref);
    const r = Number(
      await this.#run.orderEnqueue(
        [k.line, k.state, k.backlog, k.done(job.opts.jobId)],
        [ref.member, ref.at, JSON.stringify(job), ref.key],
      ),
    );
    return r === 1 ? 'add' : r === 2 ? 'done' : 'wait';
  }

  /**
   * As a run starts: run it, or park it behind the run that goes first. An
   * event created earlier that joined the line after this run became its head
   * (fan-out runs concurrently) takes the head: its job is added (or promoted)
   * here. A run that had already finished re-adds the head's job.
   */
  async claim(data: HandlerJobData & { order: OrderRef }, jobId: string, add: AddJob): Promise<OrderClaim> {
    const k = this.#keys(data.handlerId, data.order);
    const received = Date.parse(data.receivedAt);
    const r = (await this.#run.orderClaim(
      [k.state, k.done(jobId), k.line, this.#pending],
      [data.order.member, Number.isFinite(received) ? received : 0, this.#holdMs],
    )) as string[];
    switch (r[0]) {
      case 'completed':
        if (r[1]) await add(JSON.parse(r[1]) as QueuedJob);
        return { kind: 'completed' };
      case 'yield':
        if (r[1]) await add(JSON.parse(r[1]) as QueuedJob, r[2] === '1');
        return { kind: 'park' };
      case 'park':
        return { kind: 'park' };
      case 'hold':
        return { kind: 'hold', ms: Number(r[1]) };
      default:
        // A pump that died holding a batch leaves it in its in-flight list until another pump recovers it
        // (seconds later); a delivery there received before this one may be an earlier event of the key.
        if (Number.isFinite(received) && Date.now() - received < this.#holdMs && (await this.#strandedBefore(received)))
          return { kind: 'hold', ms: 100 };
        return { kind: 'run', lastAppliedAt: r[1] ? Number(r[1]) : null };
    }
  }

  /**
   * Takes a run off its line and adds the next run's job. `applied`: the run
   * completed (its event becomes the key's last applied one); otherwise it was
   * skipped or dead-lettered.
   */
  async release(
    data: HandlerJobData & { order: OrderRef },
    jobId: string,
    outcome: 'completed' | 'skipped' | 'released',
    add: AddJob,
  ): Promise<void> {
    const k = this.#keys(data.handlerId, data.order);
    const r = (await this.#run.orderRelease(
      [k.line, k.state, k.backlog, k.done(jobId)],
      [
        data.order.member,
        outcome === 'released' ? 'released' : 'completed',
        outcome === 'completed' ? data.order.at : '',
        data.order.key,
        this.#doneTtlMs,
        this.#idleTtlMs,
      ],
    )) as string[];
    if (r.length >= 2 && r[1]) await add(JSON.parse(r[1]) as QueuedJob, r[2] === '1');
  }

  /**
   * Whether a stopped pump's in-flight list holds a delivery received before
   * `receivedMs` (read at most every 200 ms per process: it changes rarely).
   */
  async #strandedBefore(receivedMs: number): Promise<boolean> {
    const now = Date.now();
    if (now - this.#stranded.at > 200) this.#stranded = { at: now, oldest: this.#readStranded() };
    const oldest = await this.#stranded.oldest;
    return oldest !== null && oldest < receivedMs;
  }

  async #readStranded(): Promise<number | null> {
    try {
      const keys = ingestKeys(this.#prefix);
      let oldest: number | null = null;
      for (const id of await this.#redis.smembers(keys.pumps)) {
        if ((await this.#redis.exists(keys.heartbeat(id))) === 1) continue;
        const first = await this.#redis.lindex(keys.inflight(id), 0);
        if (first === null) continue;
        const at = Date.parse(decodeInboxItem(first).receivedAt);
        if (Number.isFinite(at) && (oldest === null || at < oldest)) oldest = at;
      }
      return oldest;
    } catch {
      return null;
    }
  }

  /** Backlog of one ordered handler: keys with runs not yet over, those runs in all (heads included), the longest line. */
  async backlog(handlerId: string): Promise<{ keys: number; pending: number; longest: number }> {
    const key = `${this.#prefix}:order-backlog:${handlerId}`;
    // Scores are line lengths; one read of the handler's keys (a few thousand at most in practice).
    const reply = (await this.#redis.call('ZRANGE', key, '0', '-1', 'WITHSCORES')) as (string | [string, string])[];
    // Flat [member, score, …] or pairs [[member, score], …], depending on the protocol.
    const scores = reply.every(Array.isArray) ? reply.map((x) => Number(x[1])) : reply.filter((_, i) => i % 2 === 1).map(Number);
    let pending = 0;
    let longest = 0;
    for (const n of scores) {
      pending += n;
      longest = Math.max(longest, n);
    }
    return { keys: scores.length, pending, longest };
  }
}
