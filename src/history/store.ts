import type { Logger } from '../log.js';
import type { RedisClient } from '../redis/connection.js';
import { historyKeys, parseJobId } from './keys.js';
import { attemptJson, type AttemptEntry, type HistoryEntry } from './record.js';

/** Entries kept per delivery (the newest); the summary keeps receipt, fan-out and each handler's state whatever is trimmed. */
export const MAX_ENTRIES = 100;

export interface HistoryOptions {
  readonly prefix: string;
  /** How long a delivery's history is kept after its last write (HISTORY_TTL). */
  readonly ttlMs: number;
}

/** The receipt of a delivery, as its `events` job holds it. */
export interface Receipt {
  readonly receivedAt: string;
  /** When the pump queued it (the `events` job's timestamp). */
  readonly queuedAt: number;
  readonly secretIndex: number;
  readonly bytes: number;
  /** `webhook`, or what made it: `reconcile`, `poll`. */
  readonly source: string;
}

/** What fan-out learnt: the event's name and where its conversation and contact are. */
export interface FanOutFacts {
  readonly event: string;
  readonly conversation: string | null;
  readonly contact: string | null;
  readonly handlers: readonly { readonly id: string; readonly placement: string; readonly priority: string }[];
  /** The change key another delivery of the same change was dispatched with (nothing runs for this one). */
  readonly duplicateChange?: string;
  /** HISTORY_BODIES: the redacted body. */
  readonly body?: string;
}

/**
 * Writes history. Receipt and queued time are written with the fan-out (from
 * the `events` job, whose timestamp is when the pump queued it), so neither the
 * webhook route nor the ingest pump writes anything for history. Writes of one event-loop turn share one pipeline, sent without
 * waiting for its answer (callers never wait on history), and a failure is logged, never
 * thrown: history is an observer, not part of the delivery path.
 */
export class HistoryWriter {
  private readonly keys;
  private failures = 0;
  private trimmedAt = 0;

  constructor(private readonly redis: RedisClient, private readonly opts: HistoryOptions, private readonly log: Logger) {
    this.keys = historyKeys(opts.prefix);
  }

  private pending: ReturnType<RedisClient['pipeline']> | undefined;

  /**
   * The pipeline of this event-loop turn: the writes of every job that ends in
   * one turn go to Redis together (one pipeline object and one write instead of
   * one per delivery), sent from setImmediate.
   */
  private pipe(): ReturnType<RedisClient['pipeline']> {
    if (!this.pending) {
      this.pending = this.redis.pipeline();
      setImmediate(() => {
        const p = this.pending;
        this.pending = undefined;
        if (p) this.send(p);
      });
    }
    return this.pending;
  }

  private send(pipeline: ReturnType<RedisClient['pipeline']>): void {
    pipeline.exec().then((results) => {
      const err = results?.find(([e]) => e)?.[0];
      if (err) this.failed(err);
    }, (err: unknown) => this.failed(err));
  }

  private failed(err: unknown): void {
    this.failures++;
    if (this.failures === 1 || this.failures % 100 === 0) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err), failures: this.failures }, 'history write failed (deliveries are unaffected)');
    }
  }

  /** Summary fields of the receipt, and the delivery in the time index (trimmed by the TTL at most once a second). */
  private received(p: ReturnType<RedisClient['pipeline']>, key: string, r: Receipt, now: number): (string | number)[] {
    const at = Date.parse(r.receivedAt);
    const receivedAt = Number.isFinite(at) ? at : r.queuedAt;
    p.zadd(this.keys.index, receivedAt, key);
    if (now - this.trimmedAt >= 1_000) {
      this.trimmedAt = now;
      p.zremrangebyscore(this.keys.index, '-inf', now - this.opts.ttlMs);
    }
    return ['receivedAt', receivedAt, 'queuedAt', r.queuedAt, 'bytes', r.bytes, 'secretIndex', r.secretIndex, 'source', r.source];
  }

  /** Fan-out placed the runs (or found no subscriber). */
  fannedOut(key: string, receipt: Receipt, facts: FanOutFacts, now = Date.now()): void {
    const s = this.keys.summary(key);
    const e = this.keys.entries(key);
    const p = this.pipe();
    p.hset(s, ...this.received(p, key, receipt, now), 'event', facts.event,
      ...(facts.conversation ? ['conversation', facts.conversation] : []), ...(facts.contact ? ['contact', facts.contact] : []));
    // A run that already reported (another process was quicker than this write) keeps its state.
    for (const h of facts.handlers) p.hsetnx(s, `h:${h.id}`, h.placement);
    if (facts.duplicateChange !== undefined) p.hset(s, 'state', 'duplicate_change');
    else if (facts.handlers.length === 0) p.hset(s, 'state', 'no_handlers');
    const entry: HistoryEntry = { kind: 'fanout', at: now, handlers: facts.handlers, ...(facts.duplicateChange !== undefined ? { duplicateChange: facts.duplicateChange } : {}) };
    p.rpush(e, JSON.stringify(entry));
    if (facts.body !== undefined) p.rpush(e, JSON.stringify({ kind: 'body', at: now, body: facts.body } satisfies HistoryEntry));
    this.capped(p, key);
  }

  /** The delivery is not a valid event (dead-lettered without fan-out). */
  invalid(key: string, receipt: Receipt, event: string | null, reason: string, body: string | undefined, now = Date.now()): void {
    const s = this.keys.summary(key);
    const e = this.keys.entries(key);
    const p = this.pipe();
    p.hset(s, ...this.received(p, key, receipt, now), 'state', 'invalid', ...(event ? ['event', event] : []));
    p.rpush(e, JSON.stringify({ kind: 'invalid', at: now, reason } satisfies HistoryEntry));
    if (body !== undefined) p.rpush(e, JSON.stringify({ kind: 'body', at: now, body } satisfies HistoryEntry));
    this.capped(p, key);
  }

  /** One attempt of one handler job ended. */
  attempt(key: string, entry: AttemptEntry, jobId: string): void {
    const s = this.keys.summary(key);
    const p = this.pipe();
    p.rpush(this.keys.entries(key), attemptJson(entry));
    p.hset(s, `h:${entry.handler}`, entry.outcome);
    const named = parseJobId(jobId);
    if (!named || named.key !== key) p.set(this.keys.job(jobId), key, 'PX', this.opts.ttlMs);
    this.capped(p, key);
  }

  /** Repeats of deliveries already taken (the receiver answered 200 duplicate). */
  duplicates(keys: readonly string[], now = Date.now()): void {
    if (keys.length === 0) return;
    const p = this.pipe();
    for (const key of keys) {
      const s = this.keys.summary(key);
      p.hincrby(s, 'duplicates', 1);
      p.hset(s, 'lastDuplicateAt', now);
      p.pexpire(s, this.opts.ttlMs);
    }
  }

  /** The list trimmed to the newest entries; both keys live HISTORY_TTL from now. */
  private capped(p: ReturnType<RedisClient['pipeline']>, key: string): void {
    const e = this.keys.entries(key);
    p.ltrim(e, -MAX_ENTRIES, -1);
    p.pexpire(e, this.opts.ttlMs);
    p.pexpire(this.keys.summary(key), this.opts.ttlMs);
  }
}
