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
export function encodeInboxItem(delivery: StoredDelivery): string {
  if (delivery.body === undefined) return JSON.stringify(delivery);
  const { body, ...meta } = delivery;
  return `${JSON.stringify(meta)}\n${body}`;
}

/** The delivery an inbox item holds; throws on an item that is neither form. */
export function decodeInboxItem(raw: string): StoredDelivery {
  const nl = raw.indexOf('\n');
  if (nl < 0) return JSON.parse(raw) as StoredDelivery;
  const meta = JSON.parse(raw.slice(0, nl)) as Omit<StoredDelivery, 'body'>;
  return { ...meta, body: raw.slice(nl + 1) };
}
