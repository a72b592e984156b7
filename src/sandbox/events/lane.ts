import { SIGNATURE_HEADER } from '../../spec/index.js';
import { backoffDelay, isDelivered, type RetryPolicy } from './backoff.js';
import type { Envelope } from './envelope.js';
import type { DeliveryRecord } from './record.js';
import { signatureOf } from './signing.js';

/** One event waiting in a lane: its envelope, the exact bytes sent each time, and its status record. */
export interface Pending {
  envelope: Envelope;
  bytes: Buffer;
  record: DeliveryRecord;
}

/** What a lane is given by its emitter. */
export interface LaneOptions {
  fetch: typeof fetch;
  retry: RetryPolicy;
  clock: () => number;
  /** Called after each attempt and each event leaving the queue. */
  onChange: () => void;
}

/**
 * The delivery line of one workspace: its webhook URL and signing secret, and
 * its queue, drained one event at a time so the endpoint sees that
 * workspace's events in the order they happened. A failed attempt (non-2xx,
 * refused connection, timeout) is retried after an exponential back-off with
 * the SAME id and the SAME bytes; after `maxAttempts` the event is marked
 * failed and the queue moves on. Lanes are independent: one workspace's dead
 * URL never holds another's events.
 */
export class DeliveryLane {
  private readonly queue: Pending[] = [];
  private pumping: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;
  private closed = false;

  constructor(
    private url: string | null,
    private secret: string | null,
    private readonly options: LaneOptions,
  ) {
    if (url && !secret) throw new Error('a webhook URL needs a signing secret');
  }

  /** Where this lane delivers (null: nowhere, events are recorded as `not_sent`). */
  target(): string | null {
    return this.url;
  }

  /** Whether a delivery queued now would be attempted. */
  sends(): boolean {
    return this.url !== null && !this.closed;
  }

  /**
   * Points the lane elsewhere; queued events follow. With null, nothing is
   * attempted any more: every queued delivery becomes `not_sent`, keeping its
   * attempts so far. An attempt already out finishes; only its answer is recorded.
   */
  configure(url: string | null, secret: string | null): void {
    if (url && !secret) throw new Error('a webhook URL needs a signing secret');
    this.url = url;
    this.secret = secret;
    if (!url) this.dropQueue();
    this.kick();
  }

  /** Queues a delivery (its record is made `pending` for this lane's URL); false when the lane sends nothing. */
  push(p: Pending, start = true): boolean {
    if (!this.sends()) return false;
    Object.assign(p.record, { state: 'pending', next_attempt_at: null, url: this.url });
    this.queue.push(p);
    if (start) this.kick();
    return true;
  }

  /** What is queued, with its exact bytes (for `--keep-sandbox`). */
  queued(): { id: string; bytes: string }[] {
    return this.queue.map((p) => ({ id: p.envelope.id, bytes: p.bytes.toString('utf8') }));
  }

  /** Starts sending what is queued. */
  kick(): void {
    if (this.pumping || this.closed || !this.url) return;
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
      if (this.queue.length && !this.closed && this.url) this.kick();
    });
  }

  /** Resolves when the queue is empty (every event delivered or given up). */
  async idle(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  /** Stops retrying; events still queued stay `pending`. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.idle();
  }

  /** Empties the queue, marking each delivery in it `not_sent`, and ends a back-off wait. */
  private dropQueue(): void {
    for (const p of this.queue.splice(0)) {
      p.record.state = 'not_sent';
      p.record.next_attempt_at = null;
    }
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
  }

  private async pump(): Promise<void> {
    const { retry, clock, onChange } = this.options;
    while (!this.closed && this.url) {
      const head = this.queue[0];
      if (!head) return;
      const ok = await this.attempt(head, this.url, this.secret ?? '');
      onChange();
      // Dropped while the attempt was out (the URL was cleared): its record says not_sent, or delivered.
      if (this.queue[0] !== head) continue;
      if (ok || head.record.attempts >= retry.maxAttempts) {
        if (!ok) head.record.state = 'failed';
        head.record.next_attempt_at = null;
        this.queue.shift();
        onChange();
        continue;
      }
      const delay = backoffDelay(retry, head.record.attempts);
      head.record.next_attempt_at = new Date(clock() + delay).toISOString();
      await this.sleep(delay);
    }
  }

  private async attempt(p: Pending, url: string, secret: string): Promise<boolean> {
    p.record.attempts += 1;
    p.record.url = url;
    try {
      const res = await this.options.fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [SIGNATURE_HEADER]: signatureOf(p.bytes, secret) },
        body: new Uint8Array(p.bytes),
        signal: AbortSignal.timeout(this.options.retry.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      p.record.last_status = res.status;
      p.record.last_error = isDelivered(res.status) ? null : `HTTP ${res.status}`;
      if (!isDelivered(res.status)) return false;
      p.record.state = 'delivered';
      p.record.delivered_at = new Date(this.options.clock()).toISOString();
      return true;
    } catch (err) {
      p.record.last_status = null;
      p.record.last_error = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      return false;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }
}
