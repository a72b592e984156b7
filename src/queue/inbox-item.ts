import type { StoredDelivery } from './delivery.js';

/**
 * How a delivery is written to the ingest inbox list. A UTF-8 body goes
 * verbatim after one line of JSON holding everything else:
 *
 *     {"key":…,"name":…,"receivedAt":…,"secretIndex":0,"headers":{…}}\n<body>
 *
 * so the webhook route never escapes the body into a second layer of JSON (the
 * costliest step of building the item). A base64 body (bytes that are not
 * UTF-8) stays one JSON object. JSON.stringify never emits a raw newline, so
 * the first `\n` is always the separator, and an item without one is a whole
 * JSON delivery (the form inboxes held before, which is still read).
 */
export function encodeInboxItem(delivery: StoredDelivery): string;
/**
 * With `raw`, the exact bytes of `delivery.body` (the webhook route has them),
 * the item is built as bytes: the body is copied, not encoded to UTF-8 again.
 */
export function encodeInboxItem(delivery: StoredDelivery, raw: Uint8Array | undefined): string | Buffer;
export function encodeInboxItem(delivery: StoredDelivery, raw?: Uint8Array): string | Buffer {
  if (delivery.body === undefined) return JSON.stringify(delivery);
  const { body, ...meta } = delivery;
  if (raw === undefined) return `${JSON.stringify(meta)}\n${body}`;
  const head = Buffer.from(`${JSON.stringify(meta)}\n`, 'utf8');
  return Buffer.concat([head, raw], head.byteLength + raw.byteLength);
}

/** The delivery an inbox item holds; throws on an item that is neither form. */
export function decodeInboxItem(raw: string): StoredDelivery {
  const nl = raw.indexOf('\n');
  if (nl < 0) return JSON.parse(raw) as StoredDelivery;
  const meta = JSON.parse(raw.slice(0, nl)) as Omit<StoredDelivery, 'body'>;
  return { ...meta, body: raw.slice(nl + 1) };
}
