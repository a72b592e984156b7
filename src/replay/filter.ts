import { randomBytes } from 'node:crypto';
import { parseEnvelope } from '../events/index.js';
import type { ReplayItem } from './inputs.js';

/** Which items to replay; every criterion given must hold. */
export interface ReplayFilter {
  /** Event names (exact); empty: any. */
  readonly events?: readonly string[];
  /** Only these event names (the events some `--handler` subscribes to). */
  readonly subscribed?: readonly string[];
  /** Epoch ms: `received_at` (fixtures) or the envelope's `created_at` must be at or after it. */
  readonly sinceMs?: number;
  readonly limit?: number;
}

/** `--since`: a duration back from now or a date (src/util/units.ts). */
export { parseSince } from '../util/index.js';

/** When the item happened: the fixture's `received_at`, else the envelope's `created_at`. */
export function itemTime(item: ReplayItem): number | null {
  const raw = item.receivedAt ?? parseEnvelope(item.bytes).createdAt;
  if (!raw) return null;
  const t = Date.parse(raw);
  return Number.isNaN(t) ? null : t;
}

/** Applies a filter, keeping input order; `limit` counts items that passed. */
export function filterItems(items: readonly ReplayItem[], f: ReplayFilter): ReplayItem[] {
  const out: ReplayItem[] = [];
  for (const item of items) {
    if (f.limit !== undefined && out.length >= f.limit) break;
    const needName = (f.events && f.events.length > 0) || f.subscribed !== undefined;
    const name = needName ? parseEnvelope(item.bytes).name : null;
    if (f.events && f.events.length > 0 && (name === null || !f.events.includes(name))) continue;
    if (f.subscribed !== undefined && (name === null || !f.subscribed.includes(name))) continue;
    if (f.sinceMs !== undefined) {
      const t = itemTime(item);
      if (t === null || t < f.sinceMs) continue;
    }
    out.push(item);
  }
  return out;
}

/** A fresh envelope id, `evt_replay_` + 20 random hex digits. */
export const freshId = (): string => `evt_replay_${randomBytes(10).toString('hex')}`;

/**
 * `--new-ids`: gives the delivery a fresh envelope id so dedupe lets it
 * through. The envelope is parsed and re-serialised (compact JSON), so the
 * bytes change: whitespace, key order of the original text and escapes are not
 * kept. The id is written to whichever id field the envelope uses (`id`,
 * `event_id`, `delivery_id`), else to `id`. A body that is not a JSON object
 * is returned unchanged (its key is the body hash, which a new id cannot change).
 */
export function withNewId(item: ReplayItem, id: string = freshId()): ReplayItem {
  let json: unknown;
  try {
    json = JSON.parse(item.bytes.toString('utf8'));
  } catch {
    return item;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return item;
  const obj = json as Record<string, unknown>;
  // Same rule as the delivery key (src/events/envelope.ts): event_id / delivery_id, else `id` only beside
  // data/payload (in a flat body `id` may be the resource's own id, which must not change).
  const present = (f: string) => obj[f] !== undefined && obj[f] !== null;
  const field = ['event_id', 'delivery_id'].find(present) ?? (present('data') || present('payload') ? 'id' : 'event_id');
  obj[field] = id;
  return { ...item, bytes: Buffer.from(JSON.stringify(obj), 'utf8') };
}
