import type { EventName } from '../spec/index.js';

/**
 * The change key of an event: which change upstream the event reports,
 * computed from its record alone (the event's `data`, the API's resource), so
 * a real delivery and a delivery that `switchyard reconcile` synthesizes from
 * a listing of the same record map to the same key. The dispatcher claims it
 * (src/queue/change.ts): the second delivery of one change, whatever its
 * envelope id, runs no handler.
 *
 * | Event | Key | From |
 * | --- | --- | --- |
 * | `message.received`, `message.sent` | event + message id | a message happens once |
 * | `contact.created` | event + contact id + `created_at` | |
 * | `conversation.created` | event + conversation id + `created_at` | |
 * | `conversation.closed` | event + conversation id + `closed_at` | each close of a thread is its own change |
 * | `lead.created` | event + lead id | a lead is created once |
 * | `lead.won`, `lead.lost` | event + lead id | the lead record carries no time of its outcome: a second real outcome takes the key over (isRepeatableChange) |
 * | `conversation.opened` | event + conversation id | no time of the move either: repeatable, like a lead's outcome |
 * | `conversation.assigned` | event + conversation id + assignee (`user:7`, `ai:2`) | repeatable: an assignment to A, to B, to A again is three changes, told apart by delivery id or by time (below) |
 * | `contact.lifecycle_changed` | event + contact id + the stage it left (`none`) + the stage it reached | repeatable: a contact moved there and back gives each key again |
 *
 * Timestamps are normalised to ISO-8601 in UTC with milliseconds, so two
 * spellings of one instant give one key. Null when the event has no change key
 * or its record lacks what the key needs (such a delivery is deduplicated by
 * its delivery key only, as before).
 */
export function changeKey(event: string, data: unknown): string | null {
  if (typeof data !== 'object' || data === null) return null;
  const rec = data as Record<string, unknown>;
  if (event === 'contact.lifecycle_changed') return lifecycleKey(rec);
  const id = idOf(rec['id']);
  if (id === null) return null;
  switch (event) {
    case 'message.received':
    case 'message.sent':
    case 'lead.created':
    case 'lead.won':
    case 'lead.lost':
      return `${event}:${id}`;
    case 'contact.created':
    case 'conversation.created': {
      const at = instant(rec['created_at']);
      return at === null ? null : `${event}:${id}:${at}`;
    }
    case 'conversation.closed': {
      const at = instant(rec['closed_at']);
      return at === null ? null : `${event}:${id}:${at}`;
    }
    case 'conversation.opened':
      return `${event}:${id}`;
    case 'conversation.assigned': {
      const who = assigneeOf(rec['assignee']);
      return who === null ? null : `${event}:${id}:${who}`;
    }
    default:
      return null;
  }
}

/**
 * Delivery key of a delivery reconcile synthesizes: derived from the change
 * key (and the world it was found in, src/queue/world.ts) alone, so a second
 * reconcile of the same change is an ingest duplicate.
 */
export function reconcileDeliveryKey(changeKey: string, world: string | null = null, afterMs: number | null = null): string {
  const base = world === null ? `rc:${changeKey}` : `rc:@${world}:${changeKey}`;
  return afterMs === null ? base : `${base}~${Math.floor(afterMs)}`;
}

/**
 * The time a reconciled delivery's key names (`~<ms>`): when Switchyard last
 * saw the record in the state before the change (its snapshot, src/sources/poll/snapshot.ts).
 * The change happened after it, so a claim of the same key older than that is
 * an earlier change (src/queue/change.ts). Null for other keys.
 */
export function reconciledAfter(deliveryKey: string): number | null {
  const m = /^rc:.*~(\d{1,15})$/.exec(deliveryKey);
  return m ? Number(m[1]) : null;
}

/**
 * Change keys that can name a later, new change: a lead reopened and won (or
 * lost) again gives the same `lead.won:<id>`, as the record keeps no time of
 * its outcome. A real delivery of such a key is a new change unless it repeats
 * the one that holds the claim (src/queue/change.ts).
 */
export function isRepeatableChange(changeKey: string): boolean {
  return REPEATABLE.some((e) => changeKey.startsWith(`${e}:`));
}

const REPEATABLE = ['lead.won', 'lead.lost', 'conversation.opened', 'conversation.assigned', 'contact.lifecycle_changed'] as const;

/** Events reconcile infers from its snapshot of the records' state (src/sources/poll/snapshot.ts), not from a time on the record. */
export const SNAPSHOT_EVENTS = [
  'conversation.opened',
  'conversation.assigned',
  'contact.lifecycle_changed',
  'lead.won',
  'lead.lost',
] as const satisfies readonly EventName[];
export type SnapshotEvent = (typeof SNAPSHOT_EVENTS)[number];

/** Events that have a change key (and that reconcile can infer). */
export const CHANGE_KEY_EVENTS = [
  'message.received',
  'message.sent',
  'contact.created',
  'conversation.created',
  'conversation.closed',
  'lead.created',
  'lead.won',
  'lead.lost',
  'conversation.opened',
  'conversation.assigned',
  'contact.lifecycle_changed',
] as const satisfies readonly EventName[];

export type ChangeKeyEvent = (typeof CHANGE_KEY_EVENTS)[number];

/** Whether an event name has a change key. */
export function hasChangeKey(event: string): event is ChangeKeyEvent {
  return (CHANGE_KEY_EVENTS as readonly string[]).includes(event);
}

function idOf(v: unknown): string | null {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (typeof v === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v)) return v;
  return null;
}

/** An assignee as a key part (`user:7`, `ai:2`); null when unassigned or unreadable. */
function assigneeOf(v: unknown): string | null {
  if (typeof v !== 'object' || v === null) return null;
  const a = v as Record<string, unknown>;
  const type = typeof a['type'] === 'string' && /^[a-z_]{1,16}$/.test(a['type']) ? a['type'] : null;
  const id = idOf(a['id']);
  return type === null || id === null ? null : `${type}:${id}`;
}

/** `contact.lifecycle_changed:<contact>:<stage left, or none>:<stage reached>` from a ContactLifecycle. */
function lifecycleKey(rec: Record<string, unknown>): string | null {
  const contact = idOf(rec['contact_id']);
  const stage = (v: unknown) => (typeof v === 'object' && v !== null ? idOf((v as Record<string, unknown>)['id']) : null);
  const to = stage(rec['lifecycle']);
  if (contact === null || to === null) return null;
  const from = rec['previous'] === null || rec['previous'] === undefined ? 'none' : stage(rec['previous']);
  return from === null ? null : `contact.lifecycle_changed:${contact}:${from}:${to}`;
}

/** An ISO timestamp's instant as `toISOString()`; null when absent or unreadable. */
export function instant(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const t = Date.parse(v);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
}
