import { backoffDelay, DEFAULT_WEBHOOK_RETRY, isDelivered, type RetryPolicy } from './backoff.js';
import { type WebhookEventName as EventName, SIGNATURE_HEADER } from '../../spec/index.js';
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
  /** Called after anything that `saved()` reports changed (an event, an attempt, a re-point): `--keep-sandbox` saves then. */
  onChange?: () => void;
}

/** What `--keep-sandbox` keeps of the emitter: the event log, every delivery's status, and what is queued (its exact bytes). */
export interface SavedEvents {
  log: Envelope[];
  deliveries: DeliveryRecord[];
  queue: { id: string; bytes: string }[];
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

interface Pending {
  envelope: Envelope;
  bytes: Buffer;
  record: DeliveryRecord;
}

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
  private readonly onChange: () => void;

  constructor(options: EmitterOptions = {}) {
    this.onChange = options.onChange ?? (() => undefined);
    this.url = options.webhookUrl ?? null;
    this.secret = options.secret ?? null;
    if (this.url && !this.secret) throw new Error('a webhook URL needs a signing secret');
    this.fetchImpl = options.fetch ?? fetch;
    this.retry = { ...DEFAULT_WEBHOOK_RETRY, ...options.retry };
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
    this.onChange();
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
      id: env.id,
      event,
      url: this.url,
      state: this.url ? 'pending' : 'not_sent',
      attempts: 0,
      last_status: null,
      last_error: null,
      next_attempt_at: null,
      delivered_at: null,
    };
    this.records.push(record);
    if (this.url && !this.closed) {
      this.queue.push({ envelope: env, bytes: Buffer.from(JSON.stringify(env), 'utf8'), record });
      this.kick();
    }
    this.onChange();
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
      Object.assign(record, {
        url: this.url,
        state: 'pending',
        attempts: 0,
        last_status: null,
        last_error: null,
        next_attempt_at: null,
        delivered_at: null,
      });
      this.queue.push({ envelope: env, bytes: Buffer.from(JSON.stringify(env), 'utf8'), record });
      n++;
    }
    this.kick();
    this.onChange();
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
    this.onChange();
  }

  /** The log, the delivery statuses and the queue, as plain JSON (see {@link SavedEvents}). */
  saved(): SavedEvents {
    return {
      log: [...this.log],
      deliveries: this.deliveries(),
      queue: this.queue.map((p) => ({ id: p.envelope.id, bytes: p.bytes.toString('utf8') })),
    };
  }

  /**
   * Takes back what {@link saved} returned, before any event of this emitter:
   * the queued deliveries go out again (same ids, same bytes) to the URL
   * configured now, from {@link resume}; a delivery that was out when the
   * process ended is sent again, which a receiver's dedupe absorbs.
   */
  restore(saved: SavedEvents): void {
    this.log.push(...saved.log);
    this.records.push(...saved.deliveries.map((r) => ({ ...r })));
    for (const q of saved.queue) {
      const record = this.records.find((r) => r.id === q.id);
      const env = saved.log.find((e) => e.id === q.id) ?? (JSON.parse(q.bytes) as Envelope);
      if (!record) continue;
      if (!this.url || this.closed) {
        Object.assign(record, { state: 'not_sent', next_attempt_at: null });
        continue;
      }
      Object.assign(record, { state: 'pending', next_attempt_at: null, url: this.url });
      this.queue.push({ envelope: env, bytes: Buffer.from(q.bytes, 'utf8'), record });
    }
  }

  /** Starts sending what is queued (restored deliveries wait for this: the sandbox calls it when it listens). */
  resume(): void {
    this.kick();
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
      this.onChange();
      // Dropped while the attempt was out (the URL was cleared): its record says not_sent, or delivered.
      if (this.queue[0] !== head) continue;
      if (ok || head.record.attempts >= this.retry.maxAttempts) {
        if (!ok) head.record.state = 'failed';
        head.record.next_attempt_at = null;
        this.queue.shift();
        this.onChange();
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
