import type { StoredDelivery } from './delivery.js';
import { encodeInboxItem } from './inbox-item.js';
import { ingestKeys } from './names.js';
import type { RedisClient } from '../redis/index.js';
import { queueScripts } from './scripts.js';

export type IngestOutcome = 'accepted' | 'duplicate';

/**
 * One atomic step, the only Redis work on the webhook's hot path, for a batch
 * of deliveries (group commit): claim each delivery's dedupe key for
 * DEDUPE_TTL (SET NX: one command per delivery), append the deliveries whose
 * key was not yet claimed to the inbox list, and mark them in the pending
 * fan-out set (accepted, not fanned out yet, by receipt time:
 * src/queue/flow-pending.ts; so a durable run due after a delivery's receipt
 * waits for its fan-out, wherever it sits meanwhile). A script that fails
 * writes nothing: a claim is its first write, and Redis refuses a script for
 * memory (`noeviction`) only at its first write; an append that fails (a
 * wrong-type inbox key) is answered after the script has taken back its
 * claims. So a retry is not mistaken for a duplicate, and a crash can never
 * leave a delivery marked as seen but not stored. The dedupe key is separate
 * from the job, so it still holds after the job completed and was removed. A
 * key repeated inside one batch is a duplicate from its second occurrence on.
 *
 * The script is `lua/ingestBatch-n.lua`.
 */
/** Most deliveries one script run takes, whatever the options say. */
export const MAX_INGEST_BATCH = 1_000;
/**
 * Default batch size: bench/ingest (50 connections) measured 16 ahead of 8
 * (more script runs, more Redis CPU per delivery), 32 and 256 (less overlap
 * between the receiver and Redis, fewer deliveries per second).
 */
export const DEFAULT_INGEST_BATCH = 16;

interface Pending {
  readonly dedupeKey: string;
  readonly payload: string | Buffer;
  readonly receivedAt: string;
  resolve(outcome: IngestOutcome): void;
  reject(err: unknown): void;
}

export interface IngestStoreOptions {
  /**
   * Most deliveries in one script run (default DEFAULT_INGEST_BATCH, at most
   * MAX_INGEST_BATCH). A turn with more deliveries sends a batch as soon as it
   * is full, so Redis runs it while the receiver still reads the turn's other
   * requests, instead of the two waiting on each other turn after turn.
   */
  maxBatch?: number;
  /** A batch is sent early once its payloads reach this many bytes. */
  maxBatchBytes?: number;
}

/**
 * Durable, deduplicated ingest into Redis; `put` throws when Redis cannot take
 * the delivery. Deliveries put in the same event-loop turn are written by one
 * script run (group commit): every `put` still resolves only after Redis has
 * answered for its own delivery, so an answer never precedes the write, and
 * under load one round trip and one script run serve many deliveries.
 */
export class IngestStore {
  private readonly keys;
  private readonly batchKeys;
  private readonly scripts;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;
  private pending: Pending[] = [];
  private pendingBytes = 0;
  private scheduled = false;

  constructor(
    redis: RedisClient,
    prefix: string,
    private readonly dedupeTtlMs: number,
    opts: IngestStoreOptions = {},
  ) {
    this.keys = ingestKeys(prefix);
    this.batchKeys = { inbox: this.keys.inbox, pending: this.keys.pendingFanOut, dedupePrefix: this.keys.dedupe('') };
    this.scripts = queueScripts(redis);
    this.maxBatch = Math.max(1, Math.min(opts.maxBatch ?? DEFAULT_INGEST_BATCH, MAX_INGEST_BATCH));
    this.maxBatchBytes = opts.maxBatchBytes ?? 4 * 1024 * 1024;
  }

  /** `raw`: the exact bytes of `delivery.body` when at hand (the webhook route), so they are copied, not re-encoded. */
  put(delivery: StoredDelivery, raw?: Uint8Array): Promise<IngestOutcome> {
    const payload = encodeInboxItem(delivery, raw);
    return new Promise<IngestOutcome>((resolve, reject) => {
      this.pending.push({ dedupeKey: this.keys.dedupe(delivery.key), payload, receivedAt: delivery.receivedAt, resolve, reject });
      this.pendingBytes += typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
      if (this.pending.length >= this.maxBatch || this.pendingBytes >= this.maxBatchBytes) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        // After this turn's I/O callbacks: every request read in it joins the batch.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.pendingBytes = 0;
    let reply: Promise<string>;
    try {
      reply = this.scripts.ingestBatch(this.batchKeys, batch, this.dedupeTtlMs);
    } catch (err) {
      for (const p of batch) p.reject(err);
      return;
    }
    reply.then(
      (flags) => {
        if (typeof flags !== 'string' || flags.length !== batch.length) {
          const err = new Error(`ingest script answered ${JSON.stringify(flags)} for ${batch.length} deliveries`);
          for (const p of batch) p.reject(err);
          return;
        }
        for (let i = 0; i < batch.length; i++) (batch[i] as Pending).resolve(flags[i] === '1' ? 'accepted' : 'duplicate');
      },
      (err: unknown) => {
        for (const p of batch) p.reject(err);
      },
    );
  }
}
