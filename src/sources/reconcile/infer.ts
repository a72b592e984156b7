import { changeKey, instant, type ChangeKeyEvent } from '../../events/index.js';

/**
 * What `switchyard reconcile` infers from the API's listings: which events a
 * record implies for a window of time. Pure functions of one record each; the
 * walk over the listings is in `walk.ts`.
 *
 * | Event | Inferred when | Listing |
 * | --- | --- | --- |
 * | `contact.created` | the contact's `created_at` is in the window | `GET /contacts?created_after&created_before` |
 * | `conversation.created` | the thread's `created_at` is in the window | `GET /conversations` (every page: newest first by creation) |
 * | `conversation.closed` | the thread is closed and its `closed_at` is in the window (only its latest close is visible) | same walk |
 * | `message.received` | an `inbound` message whose `created_at` is in the window | `GET /conversations/{id}/messages` of threads whose `last_message_at` is in or after the window start (and not created after its end), newest first until before the window |
 * | `message.sent` | an `outbound` message with `status: sent`, not a note, `created_at` in the window | same |
 * | `lead.created` | the lead's `created_at` is in the window | `GET /leads`, newest first, until before the window |
 * | `lead.won`, `lead.lost` | the lead's `outcome` is won / lost and it was created in the window (the record carries no time of the outcome) | same |
 *
 * `lead.won` / `lead.lost` of older leads, `conversation.opened`,
 * `conversation.assigned` and `contact.lifecycle_changed` have no time on
 * the record: they come from the snapshot Switchyard keeps of those fields
 * (src/sources/poll/snapshot.ts), not from here.
 */

/** A closed-open span of time `[since, until)`, in ms since the epoch. */
export interface Window {
  readonly since: number;
  readonly until: number;
}

/** One event reconcile infers: what a webhook would have carried. */
export interface Inferred {
  readonly event: ChangeKeyEvent;
  readonly changeKey: string;
  /** Id of the record (contact, conversation, message or lead). */
  readonly resourceId: string;
  /** When the change happened, as the record says; null when it does not (lead outcomes). */
  readonly at: string | null;
  /** The record, as the API listed it: the event's `data`. */
  readonly data: Readonly<Record<string, unknown>>;
  /** Inferred from the snapshot: the record was last seen in the state before the change at this time (ms). */
  readonly afterMs?: number;
}

type Rec = Readonly<Record<string, unknown>>;

/** Whether an ISO timestamp lies in the window. */
export function inWindow(ts: unknown, w: Window): boolean {
  const at = instant(ts);
  if (at === null) return false;
  const t = Date.parse(at);
  return t >= w.since && t < w.until;
}

function one(event: ChangeKeyEvent, rec: Rec, at: unknown): Inferred[] {
  const key = changeKey(event, rec);
  if (key === null) return [];
  return [{ event, changeKey: key, resourceId: String(rec['id']), at: instant(at), data: rec }];
}

export function inferContact(c: Rec, w: Window): Inferred[] {
  return inWindow(c['created_at'], w) ? one('contact.created', c, c['created_at']) : [];
}

export function inferConversation(c: Rec, w: Window): Inferred[] {
  const out: Inferred[] = [];
  if (inWindow(c['created_at'], w)) out.push(...one('conversation.created', c, c['created_at']));
  if (c['status'] === 'closed' && inWindow(c['closed_at'], w)) out.push(...one('conversation.closed', c, c['closed_at']));
  return out;
}

/**
 * Whether a thread may hold messages of the window: its latest message is not
 * older than the window, and it was not created after the window.
 */
export function mayHoldMessages(c: Rec, w: Window): boolean {
  const created = instant(c['created_at']);
  if (created !== null && Date.parse(created) >= w.until) return false;
  const at = instant(c['last_message_at']);
  return at === null || Date.parse(at) >= w.since;
}

export function inferMessage(m: Rec, w: Window): Inferred[] {
  if (!inWindow(m['created_at'], w)) return [];
  if (m['direction'] === 'inbound') return one('message.received', m, m['created_at']);
  if (m['direction'] === 'outbound' && m['status'] === 'sent' && m['type'] !== 'note') return one('message.sent', m, m['created_at']);
  return [];
}

export function inferLead(l: Rec, w: Window): Inferred[] {
  if (!inWindow(l['created_at'], w)) return [];
  const out = one('lead.created', l, l['created_at']);
  if (l['outcome'] === 'won') out.push(...one('lead.won', l, null));
  if (l['outcome'] === 'lost') out.push(...one('lead.lost', l, null));
  return out;
}
