import { createHash } from 'node:crypto';

/**
 * What the receiver learns from a verified body. The real envelope is
 * unpublished (spec, Events rule 5), so parsing is tolerant: the name may be
 * `event`, `type` or `event_type`; the data `data` or `payload`; the id `id`,
 * `event_id` or `delivery_id`. Parsing never throws: a body that is not a
 * JSON object is still a delivery, with a `problem` for the dead-letter listing.
 */
export interface Envelope {
  /** Delivery key: the envelope id when present, else `sha256:` + hex SHA-256 of the raw body. */
  readonly key: string;
  readonly id: string | null;
  readonly name: string | null;
  readonly createdAt: string | null;
  readonly data: unknown;
  readonly problem: EnvelopeProblem | null;
}

export type EnvelopeProblem = 'invalid_json' | 'not_an_object' | 'missing_event_name';

const NAME_FIELDS = ['event', 'type', 'event_type'] as const;
/** Ids that can only name the event or the delivery, preferred over a bare `id`. */
const EVENT_ID_FIELDS = ['event_id', 'delivery_id'] as const;
const DATA_FIELDS = ['data', 'payload'] as const;
/** Longest id taken as a delivery key; longer ones fall back to the body hash. */
const MAX_ID_LENGTH = 200;

/** `sha256:` + hex SHA-256 of the exact bytes. */
export function bodyKey(bytes: Uint8Array): string {
  return 'sha256:' + createHash('sha256').update(bytes).digest('hex');
}

function pick(obj: Record<string, unknown>, fields: readonly string[]): unknown {
  for (const f of fields) if (obj[f] !== undefined && obj[f] !== null) return obj[f];
  return undefined;
}

function asId(v: unknown): string | null {
  if (typeof v === 'string' && v.trim() !== '' && v.length <= MAX_ID_LENGTH) return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  return null;
}

/** Parses the raw body of a verified delivery; total over every input. */
export function parseEnvelope(bytes: Uint8Array, text?: string): Envelope {
  let json: unknown;
  try {
    json = JSON.parse(text ?? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    return { key: bodyKey(bytes), id: null, name: null, createdAt: null, data: null, problem: 'invalid_json' };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { key: bodyKey(bytes), id: null, name: null, createdAt: null, data: json, problem: 'not_an_object' };
  }
  const obj = json as Record<string, unknown>;
  const data = pick(obj, DATA_FIELDS);
  // A bare `id` names the event only when the resource sits apart in `data`/`payload`;
  // in a flat body it may be the resource's own id (contact 7 created, then contact 7
  // changed), and keying on it would drop the second delivery as a duplicate.
  const id = asId(pick(obj, EVENT_ID_FIELDS)) ?? (data !== undefined ? asId(obj['id']) : null);
  const rawName = pick(obj, NAME_FIELDS);
  const name = typeof rawName === 'string' && rawName.trim() !== '' ? rawName : null;
  const createdAt = typeof obj['created_at'] === 'string' ? obj['created_at'] : null;
  return {
    key: id ?? bodyKey(bytes),
    id,
    name,
    createdAt,
    data: data ?? null,
    problem: name === null ? 'missing_event_name' : null,
  };
}

/**
 * BullMQ custom job ids may contain neither `:` nor be all digits, so job ids
 * are derived from the key (and a handler id) by an injective escape with a
 * fixed prefix: `%`, `:` and `/` are percent-encoded and `/` separates parts.
 */
export function jobIdFor(key: string, handlerId?: string): string {
  return handlerId === undefined ? `d/${escapeIdPart(key)}` : `d/${escapeIdPart(key)}/${escapeIdPart(handlerId)}`;
}

/** One part of a job id: `%`, `:` and `/` percent-encoded; a part with none of them (the usual key) is itself. */
function escapeIdPart(s: string): string {
  if (!/[%:/]/.test(s)) return s;
  return s.replace(/%/g, '%25').replace(/:/g, '%3A').replace(/\//g, '%2F');
}

/** The key (and handler id) a {@link jobIdFor} id was made of; null for any other id. */
export function parseJobId(id: string): { key: string; handlerId?: string } | null {
  const parts = id.split('/');
  if (parts[0] !== 'd' || parts.length < 2 || parts.length > 3) return null;
  const unesc = (s: string) => s.replace(/%(25|3A|2F)/g, (m) => (m === '%25' ? '%' : m === '%3A' ? ':' : '/'));
  return parts.length === 2 ? { key: unesc(parts[1] as string) } : { key: unesc(parts[1] as string), handlerId: unesc(parts[2] as string) };
}
