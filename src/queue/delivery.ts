import { bytesOf, textOrBase64 } from '../events/index.js';

/**
 * A verified delivery as stored in Redis: the exact raw body (UTF-8 text, or
 * base64 when it is not valid UTF-8), the request headers worth keeping, and
 * what the receiver learnt. This is the `events` job's data.
 */
export interface StoredDelivery {
  /** Delivery key (envelope id, or `sha256:` of the body). */
  readonly key: string;
  /** Event name as received (may be unknown to the catalogue). */
  readonly name: string | null;
  readonly receivedAt: string;
  /** Index of the webhook secret that verified it (rotation bookkeeping); -1 for a delivery reconcile synthesized. */
  readonly secretIndex: number;
  readonly body?: string;
  readonly bodyBase64?: string;
  readonly headers: Readonly<Record<string, string>>;
  /** W3C trace context of the delivery's last span (only when tracing is on; src/telemetry). */
  readonly traceparent?: string;
  /** Set when Switchyard made it: `reconcile` synthesized it from the API's listings, `poll` is a derived event (absent: a webhook). */
  readonly source?: 'reconcile' | 'poll';
}

/** Where verified deliveries go; throws when nothing durable could take it (→ 503). */
export interface DeliverySink {
  /** `raw`: the exact bytes of `delivery.body` (when it is text), so a store can copy rather than re-encode them. */
  put(delivery: StoredDelivery, raw?: Uint8Array): Promise<'accepted' | 'duplicate' | 'spooled'>;
}

/** The raw bytes in a StoredDelivery's form: `body` (UTF-8 text) or `bodyBase64`. */
export function encodeBody(bytes: Uint8Array, text?: string): { body: string } | { bodyBase64: string } {
  const kept = textOrBase64(bytes, text);
  return 'text' in kept ? { body: kept.text } : { bodyBase64: kept.base64 };
}

/** The exact bytes the sender signed. */
export function deliveryBytes(d: StoredDelivery): Buffer {
  return bytesOf(d.body, d.bodyBase64);
}

/** Headers kept with a delivery: never signatures, cookies or authorization. */
export const KEPT_HEADERS = ['content-type', 'user-agent', 'x-request-id', 'x-delivery-id', 'x-attempt'] as const;
