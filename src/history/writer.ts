import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/index.js';
import type { LuaArg } from '../util/index.js';
import { HISTORY_SCRIPTS } from './scripts.js';
import { historyKeys, parseJobId } from './keys.js';
import { packBody } from './bodies.js';
import { attemptJson, type AttemptEntry, type HistoryEntry } from './record.js';
import { rerunJobId } from '../queue/index.js';
import { rerunField, rerunValue } from './rerun-link.js';

/** How long a write waits for others to share its pipeline (ms). */
export const BATCH_MS = 10;
/** Commands in one pipeline at most: a full one goes at once. */
export const BATCH_MAX = 256;

/** Entries kept per delivery (the newest); the summary keeps receipt, fan-out and each handler's state whatever is trimmed. */
export const MAX_ENTRIES = 100;

/** One write: summary fields to set, to set unless present, entries to append; indexed at `indexAt` (ms) when given. */
interface Write {
  readonly set: readonly (string | number)[];
  readonly setnx?: readonly (string | number)[];
  readonly entries: readonly string[];
  readonly indexAt?: number;
}

export interface HistoryOptions {
  readonly prefix: string;
  /** How long a delivery's history is kept after its last write (HISTORY_TTL). */
  readonly ttlMs: number;
  /** How long each fanned-out delivery's exact body is kept (KEEP_BODIES; 0 or absent: none kept). */
  readonly keepBodiesMs?: number;
}

/** What a re-run's attempt says of its re-run (src/queue/jobs.ts RerunRef). */
export interface RerunAttemptLink {
  readonly id: string;
  readonly of: string;
  readonly batch?: string | undefined;
  readonly fromStep?: string | undefined;
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
  /** The body exactly as received: kept (compressed, ./bodies.ts) for KEEP_BODIES when that is on. */
  readonly raw?: Uint8Array;
  /**
   * When fan-out began (the `events` worker took the delivery), epoch ms; default: when this is written.
   * The runs it placed may start before fan-out ends, so its entry is dated by its start, before theirs.
   */
  readonly at?: number;
}

/**
 * Writes history. Receipt and queued time are written with the fan-out (from
 * the `events` job, whose timestamp is when the pump queued it), so neither the
 * webhook route nor the ingest pump writes anything for history. Writes of {@link BATCH_MS} share one pipeline
 * (at most {@link BATCH_MAX} commands), sent without waiting for its answer (callers never wait on history;
 * {@link flush} sends what waits, e.g. before the connection closes), and a failure is logged, never thrown:
 * history is an observer, not part of the delivery path.
 */
export class HistoryWriter {
  private readonly keys;
  private failures = 0;
  private trimmedAt = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly opts: HistoryOptions,
    private readonly log: Logger,
  ) {
    this.keys = historyKeys(opts.prefix);
    HISTORY_SCRIPTS.on(redis);
  }

  private pending: ReturnType<RedisClient['pipeline']> | undefined;
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  /**
   * The writes of the current batch by delivery key: a delivery's fan-out and its handler's attempt that
   * end within one batch (the common case) go to Redis as one script call, not two.
   */
  private writes = new Map<
    string,
    { set: (string | number)[]; setnx: (string | number)[]; entries: string[]; indexAt?: number | undefined; now: number }
  >();

  /** Starts a batch if none is open; sends it at once when full. */
  private batch(): void {
    if (this.queued >= BATCH_MAX) this.flush();
    this.queued++;
    this.timer ??= setTimeout(() => this.flush(), BATCH_MS);
  }

  /**
   * The pipeline of the current batch: the writes of every job that ends within
   * {@link BATCH_MS} go to Redis together (one pipeline object, one socket write
   * and one answer to wait for instead of one per delivery or per event-loop turn); the writes of one
   * delivery in it are merged ({@link write}).
   */
  private pipe(): ReturnType<RedisClient['pipeline']> {
    this.batch();
    this.pending ??= this.redis.pipeline();
    return this.pending;
  }

  /** Sends the writes waiting for their batch now. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queued = 0;
    const writes = this.writes;
    this.writes = new Map();
    if (writes.size === 0 && !this.pending) return;
    const p = this.pending ?? this.redis.pipeline();
    this.pending = undefined;
    for (const [key, w] of writes) this.queueWrite(p, key, w);
    this.send(p);
  }

  private send(pipeline: ReturnType<RedisClient['pipeline']>): void {
    pipeline.exec().then(
      (results) => {
        const err = results?.find(([e]) => e)?.[0];
        if (err) this.failed(err);
      },
      (err: unknown) => this.failed(err),
    );
  }

  private failed(err: unknown): void {
    this.failures++;
    if (this.failures === 1 || this.failures % 100 === 0) {
      this.log.warn(
        { err: err instanceof Error ? err.message : String(err), failures: this.failures },
        'history write failed (deliveries are unaffected)',
      );
    }
  }

  /**
   * Adds one write of `key`'s history to the batch, merged with the batch's other writes of the same key
   * (their fields set in order, entries appended in order: the same result as two calls).
   */
  private write(key: string, w: Write, now: number): void {
    this.batch();
    const cur = this.writes.get(key);
    if (!cur) {
      this.writes.set(key, { set: [...w.set], setnx: [...(w.setnx ?? [])], entries: [...w.entries], indexAt: w.indexAt, now });
      return;
    }
    cur.set.push(...w.set);
    if (w.setnx) cur.setnx.push(...w.setnx);
    cur.entries.push(...w.entries);
    cur.indexAt = w.indexAt ?? cur.indexAt;
    cur.now = now;
  }

  /**
   * Queues one write of `key`'s history (historyWrite-3.lua): the summary fields, the entries appended and
   * the list trimmed to the newest {@link MAX_ENTRIES}, both keys living HISTORY_TTL from now, and the
   * delivery in the time index (trimmed by the TTL at most once a second).
   */
  private queueWrite(p: ReturnType<RedisClient['pipeline']>, key: string, w: Write & { now: number }): void {
    let trim: number | '' = '';
    if (w.indexAt !== undefined && w.now - this.trimmedAt >= 1_000) {
      this.trimmedAt = w.now;
      trim = w.now - this.opts.ttlMs;
    }
    const setnx = w.setnx ?? [];
    const args: LuaArg[] = [
      this.opts.ttlMs,
      MAX_ENTRIES,
      w.indexAt ?? '',
      key,
      trim,
      w.set.length / 2,
      ...w.set,
      setnx.length / 2,
      ...setnx,
      ...w.entries,
    ];
    HISTORY_SCRIPTS.queue(p, 'historyWrite', [this.keys.summary(key), this.keys.entries(key), this.keys.index], args);
  }

  /** Summary fields of the receipt, and when it was received (ms; the queued time when the receipt has none). */
  private received(r: Receipt): { fields: (string | number)[]; at: number } {
    const at = Date.parse(r.receivedAt);
    const receivedAt = Number.isFinite(at) ? at : r.queuedAt;
    return {
      fields: ['receivedAt', receivedAt, 'queuedAt', r.queuedAt, 'bytes', r.bytes, 'secretIndex', r.secretIndex, 'source', r.source],
      at: receivedAt,
    };
  }

  /** Fan-out placed the runs (or found no subscriber); the body is kept when KEEP_BODIES is on. */
  fannedOut(key: string, receipt: Receipt, facts: FanOutFacts, now = Date.now()): void {
    const keepMs = this.opts.keepBodiesMs ?? 0;
    if (facts.raw && keepMs > 0) this.pipe().set(this.keys.body(key), packBody(facts.raw), 'PX', keepMs);
    const r = this.received(receipt);
    const state =
      facts.duplicateChange !== undefined ? ['state', 'duplicate_change'] : facts.handlers.length === 0 ? ['state', 'no_handlers'] : [];
    const entry: HistoryEntry = {
      kind: 'fanout',
      at: facts.at ?? now,
      handlers: facts.handlers,
      ...(facts.duplicateChange !== undefined ? { duplicateChange: facts.duplicateChange } : {}),
    };
    this.write(
      key,
      {
        set: [
          ...r.fields,
          'event',
          facts.event,
          ...(facts.conversation ? ['conversation', facts.conversation] : []),
          ...(facts.contact ? ['contact', facts.contact] : []),
          ...state,
        ],
        // A run that already reported (another process was quicker than this write) keeps its state.
        setnx: facts.handlers.flatMap((h) => [`h:${h.id}`, h.placement]),
        entries: [
          JSON.stringify(entry),
          ...(facts.body !== undefined
            ? [JSON.stringify({ kind: 'body', at: facts.at ?? now, body: facts.body } satisfies HistoryEntry)]
            : []),
        ],
        indexAt: r.at,
      },
      now,
    );
  }

  /** The delivery is not a valid event (dead-lettered without fan-out). */
  invalid(key: string, receipt: Receipt, event: string | null, reason: string, body: string | undefined, now = Date.now()): void {
    const r = this.received(receipt);
    this.write(
      key,
      {
        set: [...r.fields, 'state', 'invalid', ...(event ? ['event', event] : [])],
        entries: [
          JSON.stringify({ kind: 'invalid', at: now, reason } satisfies HistoryEntry),
          ...(body !== undefined ? [JSON.stringify({ kind: 'body', at: now, body } satisfies HistoryEntry)] : []),
        ],
        indexAt: r.at,
      },
      now,
    );
  }

  /**
   * A schedule's run for one tick started (each attempt writes it again; the same fields). Its history is a
   * delivery's: key `schedule:<id>:<tick ISO>`, received at the tick, source and event `schedule`, indexed
   * at the tick; its attempts follow as a handler's.
   */
  scheduled(key: string, tickMs: number, now = Date.now()): void {
    this.write(key, { set: ['receivedAt', tickMs, 'source', 'schedule', 'event', 'schedule'], entries: [], indexAt: tickMs }, now);
  }

  /** One attempt of one handler job ended. */
  attempt(key: string, entry: AttemptEntry, jobId: string): void {
    const named = parseJobId(jobId);
    if (!named || named.key !== key) this.pipe().set(this.keys.job(jobId), key, 'PX', this.opts.ttlMs);
    this.write(key, { set: [`h:${entry.handler}`, entry.outcome], entries: [attemptJson(entry)] }, Date.now());
  }

  /**
   * One attempt of a re-run ended (`switchyard rerun`; ./rerun-link.ts): written to the re-run's own history
   * (its job id, linked to the original), and its latest state on the original delivery's summary.
   */
  rerunAttempt(key: string, event: string, link: RerunAttemptLink, entry: AttemptEntry, jobId: string, now = Date.now()): void {
    const own = rerunJobId(key, entry.handler, link.id);
    if (jobId !== own) this.pipe().set(this.keys.job(jobId), own, 'PX', this.opts.ttlMs);
    const opt = [...(link.batch ? ['batch', link.batch] : []), ...(link.fromStep ? ['fromStep', link.fromStep] : [])];
    this.write(
      own,
      {
        set: ['rerunOf', key, 'rerunJob', link.of, 'rerunId', link.id, ...opt, 'event', event, `h:${entry.handler}`, entry.outcome],
        entries: [attemptJson(entry)],
      },
      now,
    );
    const value = rerunValue({
      id: link.id,
      handler: entry.handler,
      batch: link.batch ?? null,
      fromStep: link.fromStep ?? null,
      outcome: entry.outcome,
      at: entry.at,
    });
    this.write(key, { set: [rerunField(own), value], entries: [] }, now);
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
}
