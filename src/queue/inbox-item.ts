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
  // Both body forms at once is no form this codec writes: kept whole, as before.
  // So is a synthesized delivery (reconcile), whose `source` the meta line does not carry.
  if (delivery.body === undefined || delivery.bodyBase64 !== undefined || delivery.source !== undefined) return JSON.stringify(delivery);
  const head = metaLine(delivery);
  if (raw === undefined) return head + delivery.body;
  // One allocation (from Node's pool for webhook-sized items), head then the raw bytes.
  const headBytes = Buffer.byteLength(head, 'utf8');
  const item = Buffer.allocUnsafe(headBytes + raw.byteLength);
  item.write(head, 0, headBytes, 'utf8');
  item.set(raw, headBytes);
  return item;
}

/**
 * `JSON.stringify` of the delivery without its body, plus the `\n`, written
 * field by field: no intermediate object per delivery. Same text as
 * `JSON.stringify({ key, name, receivedAt, secretIndex, headers, traceparent })`.
 */
function metaLine(d: StoredDelivery): string {
  return (
    `{"key":${JSON.stringify(d.key)},"name":${JSON.stringify(d.name)},"receivedAt":${JSON.stringify(d.receivedAt)},` +
    `"secretIndex":${JSON.stringify(d.secretIndex)},"headers":${JSON.stringify(d.headers)}` +
    `${d.traceparent === undefined ? '' : `,"traceparent":${JSON.stringify(d.traceparent)}`}}\n`
  );
}

/** The delivery an inbox item holds; throws on an item that is neither form. */
export function decodeInboxItem(raw: string): StoredDelivery {
  const nl = raw.indexOf('\n');
  if (nl < 0) return JSON.parse(raw) as StoredDelivery;
  const meta = JSON.parse(raw.slice(0, nl)) as Omit<StoredDelivery, 'body'>;
  return { ...meta, body: raw.slice(nl + 1) };
}
