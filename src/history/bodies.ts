import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { encodeBody, type StoredDelivery } from '../queue/index.js';
import type { RedisClient } from '../redis/index.js';
import { historyKeys } from './keys.js';

/*
 * Kept bodies (KEEP_BODIES): each fanned-out delivery's body exactly as received (the bytes that were signed),
 * compressed, at `<prefix>:hist:b:<key>` for `deliveries --where` and `rerun`. Unlike HISTORY_BODIES (a redacted
 * copy in the entries, for `trace`), these are the real bytes: never logged, read only here.
 *
 * Stored form: one tag byte, then the body: `d` = raw DEFLATE (RFC 1951, node:zlib's deflateRaw) with the preset
 * dictionary {@link DICTIONARY_1}, `r` = the bytes as they came (a body DEFLATE would not make smaller). The tag lets
 * a later form (another dictionary) be added beside these; a form once written is never changed.
 */

const DEFLATED_1 = 0x64; // 'd'
const STORED = 0x72; // 'r'

/**
 * The preset dictionary of form `d`: the envelope and the fields of the catalogue's events as the workspace sends
 * them, so a body of ~600 bytes starts with its names already known (measured: 0.40 of the raw size, 0.58 without;
 * bench/README.md, "Kept bodies"). Fixed forever: bodies kept with it are read with it. The most common (a
 * message) comes last, where DEFLATE reaches it with the shortest distances.
 */
const DICTIONARY_1 = Buffer.from(
  [
    '"task.due","title":"description":"assignee_id":"created_by":"due_at":"completed_at":',
    '"order.created","order.status_changed","number":"deal_id":"owner_id":"status":"new","source":"whatsapp",',
    '"payment":{"method":"cash","status":"unpaid","reference":null,"paid_at":null},"delivery":{"address":"city":',
    '"area":null,"fee":"items":[{"id":"product_id":"product_variant_id":null,"name":"sku":"quantity":1,',
    '"unit_price":".00","line_total":"subtotal":"discount":"0.00","total":"notes":null,"external_id":null,',
    '"confirmed_at":null,"delivered_at":null,"cancelled_at":null,"cancel_reason":null,"previous_status":',
    '"lead.created","lead.won","lead.lost","value":"outcome":"open"',
    '"contact.lifecycle_changed","previous":null,"lifecycle":{"id":"role":null,"outcome":null}',
    '"contact.created","name":"phone":"+","email":"@example.com","lifecycle_stage_id":null,"blocked":false,',
    '"updated_at":"conversation.closed","conversation.assigned","conversation.created","conversation.opened",',
    '"contact_id":"channel":{"id":1,"name":"WhatsApp","type":"whatsapp"},"status":"open","subject":null,',
    '"assignee":{"type":"user","id":"last_message_at":"closed_at":null,',
    '"message.sent","direction":"outbound","sender_type":"user","user_id":"status":"sent"',
    '{"id":"evt_","event":"message.received","created_at":"2026-01-01T00:00:00.000Z","data":{"id":',
    '"conversation_id":,"type":"message","direction":"inbound","sender_type":"contact","user_id":null,"body":"',
    '","content_type":"text","status":null,"created_at":"2026-01-01T00:00:00.000Z"}}',
  ].join(''),
);

/** A kept body that cannot be read back (an unknown form, or damaged). */
export class KeptBodyError extends Error {
  readonly code = 'kept_body_unreadable';
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`the kept body of delivery "${key}" cannot be read (${reason}); it was written by another version or damaged`);
    this.name = 'KeptBodyError';
  }
}

/** The stored form of a body: compressed unless that makes it no smaller. */
export function packBody(raw: Uint8Array): Buffer {
  const deflated = deflateRawSync(raw, { dictionary: DICTIONARY_1 });
  if (deflated.byteLength < raw.byteLength) return Buffer.concat([Buffer.of(DEFLATED_1), deflated]);
  return Buffer.concat([Buffer.of(STORED), raw]);
}

/** The exact bytes of a stored body; throws {@link KeptBodyError} for a form it does not know. */
export function unpackBody(key: string, stored: Buffer): Buffer {
  const tag = stored[0];
  if (tag === STORED) return stored.subarray(1);
  if (tag !== DEFLATED_1) throw new KeptBodyError(key, tag === undefined ? 'empty' : `unknown form 0x${tag.toString(16)}`);
  try {
    return inflateRawSync(stored.subarray(1), { dictionary: DICTIONARY_1 });
  } catch (err) {
    throw new KeptBodyError(key, (err as { code?: string }).code ?? 'not DEFLATE');
  }
}

/**
 * The kept bodies of `keys` (one pipelined round trip), each the exact bytes received, in the order of `keys`;
 * null where none is kept (KEEP_BODIES=0 or HISTORY=off when it came, expired after KEEP_BODIES, not fanned out
 * yet, or not a delivery: a schedule run). Throws {@link KeptBodyError} for one that cannot be read.
 */
export async function readKeptBodies(redis: RedisClient, prefix: string, keys: readonly string[]): Promise<(Buffer | null)[]> {
  if (keys.length === 0) return [];
  const k = historyKeys(prefix);
  const p = redis.pipeline();
  for (const key of keys) p.getBuffer(k.body(key));
  const rows = (await p.exec()) ?? [];
  return keys.map((key, i) => {
    const [err, value] = rows[i] ?? [new Error('no answer'), null];
    if (err) throw err;
    return value ? unpackBody(key, value as Buffer) : null;
  });
}

/**
 * The deliveries of `keys` rebuilt as the `events` job held them (for `rerun`): the kept body with the receipt the
 * history recorded (event name, received time, secret index, source). Headers are not kept: `{}`. Null where no
 * body is kept or the history of the delivery has expired.
 */
export async function readKeptDeliveries(redis: RedisClient, prefix: string, keys: readonly string[]): Promise<(StoredDelivery | null)[]> {
  if (keys.length === 0) return [];
  const k = historyKeys(prefix);
  const p = redis.pipeline();
  for (const key of keys) p.hmget(k.summary(key), 'event', 'receivedAt', 'secretIndex', 'source');
  const [bodies, rows] = await Promise.all([readKeptBodies(redis, prefix, keys), p.exec()]);
  return keys.map((key, i) => {
    const body = bodies[i];
    const [err, fields] = rows?.[i] ?? [null, null];
    if (err) throw err;
    const [event, receivedAt, secretIndex, source] = (fields ?? []) as (string | null)[];
    if (!body || receivedAt == null) return null;
    return {
      key,
      name: event ?? null,
      receivedAt: new Date(Number(receivedAt)).toISOString(),
      secretIndex: Number(secretIndex ?? 0),
      ...encodeBody(body),
      headers: {},
      ...(source === 'reconcile' || source === 'poll' ? { source } : {}),
    };
  });
}
