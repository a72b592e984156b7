import { parseEnvelope, validateEvent, type Envelope, type WorkspaceEvent } from '../events/index.js';
import { EVENTS_QUEUE, deliveryBytes, type StoredDelivery } from '../queue/index.js';
import type { RedisClient } from '../redis/index.js';
import { jobIdFor } from '../events/index.js';
import { readKeptBodies } from '../history/index.js';

/** The raw bodies of deliveries by key, as received; a key missing from the answer has none kept. */
export type BodyReader = (keys: readonly string[]) => Promise<ReadonlyMap<string, Buffer>>;

/**
 * Bodies from the `events` jobs still in Redis (a delivery's job keeps its raw body; completed jobs are
 * kept an hour, src/queue/job-options.ts): the bodies of recent deliveries.
 */
export function eventsJobBodies(redis: RedisClient, prefix: string): BodyReader {
  return async (keys) => {
    const out = new Map<string, Buffer>();
    const p = redis.pipeline();
    for (const k of keys) p.hget(`${prefix}:${EVENTS_QUEUE}:${jobIdFor(k)}`, 'data');
    const rows = (await p.exec()) ?? [];
    keys.forEach((k, i) => {
      const raw = rows[i]?.[1];
      if (typeof raw !== 'string') return;
      try {
        out.set(k, deliveryBytes(JSON.parse(raw) as StoredDelivery));
      } catch {
        /* not a delivery's data: none kept */
      }
    });
    return out;
  };
}

/**
 * The bodies the history keeps (KEEP_BODIES, src/history/bodies.ts); one that cannot be read back (another
 * version's form, damaged) counts as not kept.
 */
export function keptBodies(redis: RedisClient, prefix: string): BodyReader {
  return async (keys) => {
    const out = new Map<string, Buffer>();
    const one = async (ks: readonly string[]) =>
      (await readKeptBodies(redis, prefix, ks)).forEach((b, i) => b && out.set(ks[i] as string, b));
    await one(keys).catch(() => Promise.all(keys.map((k) => one([k]).catch(() => undefined))));
    return out;
  };
}

/** The bodies a rerun reads: the history's kept ones, else those of the `events` jobs still in Redis. */
export const rerunBodies = (redis: RedisClient, prefix: string): BodyReader =>
  firstOf(keptBodies(redis, prefix), eventsJobBodies(redis, prefix));

/** The first reader's bodies, then the next one's for the keys it did not have. */
export function firstOf(...readers: readonly BodyReader[]): BodyReader {
  return async (keys) => {
    const out = new Map<string, Buffer>();
    let left = [...keys];
    for (const read of readers) {
      if (left.length === 0) break;
      for (const [k, v] of await read(left)) out.set(k, v);
      left = left.filter((k) => !out.has(k));
    }
    return out;
  };
}

/** The event a kept body holds, validated against the catalogue as fan-out does; else why it cannot run. */
export function eventOfBody(
  bytes: Buffer,
  edit?: (envelope: Record<string, unknown>) => void,
): { ok: true; event: WorkspaceEvent } | { ok: false; reason: string } {
  let envelope: Envelope = parseEnvelope(bytes);
  if (edit && envelope.problem === null) {
    const raw = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    edit(raw);
    envelope = parseEnvelope(Buffer.from(JSON.stringify(raw), 'utf8'));
  }
  const r = validateEvent(envelope);
  if (r.ok) return { ok: true, event: r.event };
  return { ok: false, reason: `not a valid event (${r.reason}): ${r.message}${r.issues?.length ? ` [${r.issues.join('; ')}]` : ''}` };
}
