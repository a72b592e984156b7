import { backoffDelay, DEFAULT_RETRY, isDelivered, type RetryPolicy } from './backoff.js';
import type { WebhookEventName as EventName } from '../../spec/events.js';
import { SIGNATURE_HEADER } from '../../spec/webhooks.js';
import { envelope, type Envelope } from './envelope.js';
import { signatureOf } from './signing.js';

/** Header carrying the signature (spec: Events 3; the spec's neutral name for the branded header). */
export { SIGNATURE_HEADER };

/** Where and how events are delivered. */
export interface EmitterOptions {
  webhookUrl?: string | undefined;
  secret?: string | undefined;
  /** Injected transport (tests pass their own); global fetch by default. */
  fetch?: typeof fetch;
  retry?: Partial<RetryPolicy>;
  clock?: () => number;
}

/** Delivery status of one event, as `/_sandbox/deliveries` lists it. */
export interface DeliveryRecord {
  id: string;
  event: EventName;
  url: string | null;
  state: 'pending' | 'delivered' | 'failed' | 'not_sent';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

interface Pending { envelope: Envelope; bytes: Buffer; record: DeliveryRecord }

/**
 * Posts signed events to the webhook URL. Delivery never blocks the API
 * answer: `emit` queues and returns. The queue is drained one event at a time
 * so the endpoint sees events in the order they happened; a failed attempt
 * (non-2xx, refused connection, timeout) is retried after an exponential
 * back-off with the SAME id and the SAME bytes, so a receiver's dedupe is
 * exercised for real. After `maxAttempts` the event is marked failed and the
 * queue moves on.
 */
export class WebhookEmitter {
  private url: string | null;
  private secret: string | null;
  private readonly fetchImpl: typeof fetch;
  private readonly retry: RetryPolicy;
  private readonly clock: () => number;
  private readonly queue: Pending[] = [];
  private readonly log: Envelope[] = [];
  private readonly records: DeliveryRecord[] = [];
  private pumping: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;
  private closed = false;

  constructor(options: EmitterOptions = {}) {
    this.url = options.webhookUrl ?? null;
    this.secret = options.secret ?? null;
    if (this.url && !this.secret) throw new Error('a webhook URL needs a signing secret');
    this.fetchImpl = options.fetch ?? fetch;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Points deliveries somewhere else; queued events follow. With null, nothing
   * is attempted any more: every queued delivery (the one between retries
   * included) becomes `not_sent`, keeping its attempts so far, and can be sent
   * again with `redeliver` once a URL is set. An attempt already out finishes;
   * only its answer is recorded.
   */
  configure(url: string | null, secret: string | null): void {
    if (url && !secret) throw new Error('a webhook URL needs a signing secret');
    this.url = url;
    this.secret = secret;
    if (!url) this.dropQueue();
    this.kick();
  }

  /** Current target (secret not included). */
  target(): { url: string | null } {
    return { url: this.url };
  }

  /** Records the event and queues its delivery; returns the envelope sent. */
  emit(event: EventName, data: unknown): Envelope {
    const env = envelope(event, data, this.clock());
    this.log.push(env);
    const record: DeliveryRecord = {
      id: env.id, event, url: this.url, state: this.url ? 'pending' : 'not_sent', attempts: 0,
      last_status: null, last_error: null, next_attempt_at: null, delivered_at: null,
    };
    this.records.push(record);
    if (this.url && !this.closed) {
      this.queue.push({ envelope: env, bytes: Buffer.from(JSON.stringify(env), 'utf8'), record });
      this.kick();
    }
    return env;
  }

  /**
   * Sends kept events again, as a service's late retry would: the same id and
   * the same bytes, signed, queued after what is pending. `ids` picks them
   * (default: every event whose delivery `failed` or was `not_sent`). Returns how many were queued.
   */
  redeliver(ids?: readonly string[]): number {
    if (!this.url || this.closed) return 0;
    const wanted = ids ? new Set(ids) : null;
    let n = 0;
    for (const env of this.log) {
      const record = this.records.find((r) => r.id === env.id);
      if (!record || record.state === 'pending') continue;
      if (wanted ? !wanted.has(env.id) : record.state !== 'failed' && record.state !== 'not_sent') continue;
      Object.assign(record, { url: this.url, state: 'pending', attempts: 0, last_status: null, last_error: null, next_attempt_at: null, delivered_at: null });
      this.queue.push({ envelope: env, bytes: Buffer.from(JSON.stringify(env), 'utf8'), record });
      n++;
    }
    this.kick();
    return n;
  }

  /** Every event emitted since the last clear, oldest first. */
  events(): Envelope[] {
    return [...this.log];
  }

  /** Delivery status of every event, oldest first. */
  deliveries(): DeliveryRecord[] {
    return this.records.map((r) => ({ ...r }));
  }

  /** Forgets the event log and finished deliveries (queued ones keep going). */
  clear(): void {
    this.log.length = 0;
    const live = this.records.filter((r) => r.state === 'pending');
    this.records.length = 0;
    this.records.push(...live);
  }

  /** Resolves when the queue is empty (every event delivered or given up). */
  async idle(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  /** Stops retrying; events still queued stay `pending` in the status list. */
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

  private kick(): void {
    if (this.pumping || this.closed || !this.url) return;
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
      if (this.queue.length && !this.closed && this.url) this.kick();
    });
  }

  private async pump(): Promise<void> {
    while (!this.closed && this.url) {
      const head = this.queue[0];
      if (!head) return;
      const ok = await this.attempt(head, this.url, this.secret ?? '');
      // Dropped while the attempt was out (the URL was cleared): its record says not_sent, or delivered.
      if (this.queue[0] !== head) continue;
      if (ok || head.record.attempts >= this.retry.maxAttempts) {
        if (!ok) head.record.state = 'failed';
        head.record.next_attempt_at = null;
        this.queue.shift();
        continue;
      }
      const delay = backoffDelay(this.retry, head.record.attempts);
      head.record.next_attempt_at = new Date(this.clock() + delay).toISOString();
      await this.sleep(delay);
    }
  }

  private async attempt(p: Pending, url: string, secret: string): Promise<boolean> {
    p.record.attempts += 1;
    p.record.url = url;
    try {
      const res = await this.fetchImpl(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', [SIGNATURE_HEADER]: signatureOf(p.bytes, secret) },
        body: new Uint8Array(p.bytes),
        signal: AbortSignal.timeout(this.retry.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      p.record.last_status = res.status;
      p.record.last_error = isDelivered(res.status) ? null : `HTTP ${res.status}`;
      if (!isDelivered(res.status)) return false;
      p.record.state = 'delivered';
      p.record.delivered_at = new Date(this.clock()).toISOString();
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
