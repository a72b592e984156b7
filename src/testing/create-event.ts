import { createHash } from 'node:crypto';
import {
  isEventName,
  suggestEventName,
  validateEvent,
  type EventData,
  type EventName,
  type WorkspaceEvent,
  parseEnvelope,
} from '../events/index.js';
import { defaultEnvelope } from '../replay/index.js';
import { DeliveryError } from './delivery.js';

/**
 * `T` with every object property optional at every depth, for overriding a
 * default. Arrays are replaced whole (their items are not merged), and so is
 * anything that is not a plain object.
 */
export type DeepPartial<T> = T extends readonly (infer U)[] ? readonly U[] : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** What {@link createEvent} changes of the default event: the envelope's id and time, and fields of `data`. */
export interface EventOverrides<N extends EventName> {
  /** Envelope id; `null` for a delivery without one (its key is then the body's hash). */
  readonly id?: string | null;
  readonly createdAt?: string | null;
  /** Deep-merged over the default data: objects merge, arrays and other values replace. */
  readonly data?: DeepPartial<EventData<N>>;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function merge(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(over)) return over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
  return out;
}

/**
 * A valid event `name` as its handler receives it, built from the package's
 * fixture of that event (its data names records of the sandbox's seed) with
 * `overrides` deep-merged over it, and checked against the event catalogue
 * as the worker checks it.
 *
 * The id is the fixture's while the event is the fixture's own; once anything
 * is overridden it is derived from the content (`evt_test_…`), so two
 * different events are two deliveries (with their own Idempotency-Keys) and
 * the same event built twice is one delivery, as the worker deduplicates it.
 *
 * Throws a DeliveryError for an unknown name (with a did-you-mean) or a field
 * the catalogue refuses, naming it (`data.value: …`).
 *
 * @example
 * const won = createEvent('lead.won', { data: { contact_id: 35, value: '99.00' } });
 */
export function createEvent<N extends EventName>(name: N, overrides: EventOverrides<N> = {}): WorkspaceEvent<N> {
  if (!isEventName(name)) {
    const hint = suggestEventName(String(name));
    throw new DeliveryError(
      `createEvent: unknown event ${JSON.stringify(name)}${hint ? `; did you mean "${hint}"?` : ''} (expected one of EVENT_NAMES)`,
    );
  }
  const base = defaultEnvelope(name);
  const data = merge(base['data'], overrides.data);
  const createdAt = overrides.createdAt !== undefined ? overrides.createdAt : base['created_at'];
  const content = JSON.stringify({ event: name, created_at: createdAt, data });
  const own = content === JSON.stringify({ event: name, created_at: base['created_at'], data: base['data'] });
  const id =
    overrides.id !== undefined
      ? overrides.id
      : own
        ? base['id']
        : `evt_test_${createHash('sha256').update(content).digest('hex').slice(0, 24)}`;
  const result = validateEvent(parseEnvelope(Buffer.from(JSON.stringify({ id, event: name, created_at: createdAt, data }), 'utf8')));
  if (!result.ok) {
    throw new DeliveryError(`createEvent("${name}"): ${result.message}${result.issues?.length ? `: ${result.issues.join('; ')}` : ''}`);
  }
  return result.event as WorkspaceEvent<N>;
}
