import { isUtf8 } from 'node:buffer';

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
  /** Index of the webhook secret that verified it (rotation bookkeeping). */
  readonly secretIndex: number;
  readonly body?: string;
  readonly bodyBase64?: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Encodes the raw bytes losslessly: text when the bytes are valid UTF-8, else
 * base64. Pass `text` when the caller already decoded the bytes (hot path).
 */
export function encodeBody(bytes: Uint8Array, text?: string): { body: string } | { bodyBase64: string } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isUtf8(buf) ? { body: text ?? buf.toString('utf8') } : { bodyBase64: buf.toString('base64') };
}

/** The exact bytes the sender signed. */
export function deliveryBytes(d: StoredDelivery): Buffer {
  return d.bodyBase64 !== undefined ? Buffer.from(d.bodyBase64, 'base64') : Buffer.from(d.body ?? '', 'utf8');
}

/** Headers kept with a delivery: never signatures, cookies or authorization. */
export const KEPT_HEADERS = ['content-type', 'user-agent', 'x-request-id', 'x-delivery-id', 'x-attempt'] as const;
