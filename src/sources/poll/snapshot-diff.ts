import { changeKey, type SnapshotEvent } from '../../events/index.js';

/**
 * The snapshot's diffing, pure: the fields whose changes are events, kept per
 * record in a few bytes, and what a listing means against them. Redis and the
 * API stay in snapshot.ts and snapshot-store.ts.
 *
 * | Kind | Tracked records | Kept per record | Events |
 * | --- | --- | --- | --- |
 * | `conversations` | every thread not closed (open, pending, snoozed) | status letter and assignee: `o\|u7`, `p\|` | `conversation.opened`, `conversation.assigned` |
 * | `leads` | every open lead | its contact id (to find its outcome once it leaves the open listing) | `lead.won`, `lead.lost` |
 * | `contacts` | every contact | its lifecycle stage id (`''`: none) | `contact.lifecycle_changed` (the stage it left, from here) |
 */

export type SnapshotKind = 'conversations' | 'leads' | 'contacts';
export const SNAPSHOT_KINDS: readonly SnapshotKind[] = ['conversations', 'leads', 'contacts'];

/** The events each kind's snapshot recovers. */
export const KIND_EVENTS: Readonly<Record<SnapshotKind, readonly SnapshotEvent[]>> = {
  conversations: ['conversation.opened', 'conversation.assigned'],
  leads: ['lead.won', 'lead.lost'],
  contacts: ['contact.lifecycle_changed'],
};

/** The kinds whose snapshot the wanted events need. */
export function kindsFor(events: Iterable<string>): SnapshotKind[] {
  const wanted = new Set(events);
  return SNAPSHOT_KINDS.filter((k) => KIND_EVENTS[k].some((e) => wanted.has(e)));
}

type Rec = Readonly<Record<string, unknown>>;

/** A change the snapshot shows: the event a webhook would have carried, and when the state before it was last seen. */
export interface SnapshotChange {
  readonly event: SnapshotEvent;
  readonly changeKey: string;
  readonly resourceId: string;
  /** The record was last seen in the state before the change at this time (ms, on the API's clock): the change came after it. */
  readonly afterMs: number;
  /** When the snapshot first saw the new state (ms, our clock). */
  readonly observedMs: number;
  /** The event's `data`, as a webhook carries it. */
  readonly data: Rec;
}

/** A thread created this close to the last refresh's start may have been listed by it, or not: it is new either way. */
export const CREATED_OVERLAP_MS = 60_000;

const STATUS_LETTER: Readonly<Record<string, string>> = { open: 'o', pending: 'p', snoozed: 's', closed: 'c' };

/** A thread's tracked state: `<status letter>|<assignee type letter><id>` (`o|u7`, `p|`). */
export function encodeConversation(c: Rec): string {
  const a = c['assignee'] as Rec | null | undefined;
  const who = a && typeof a['type'] === 'string' ? `${a['type'].slice(0, 1)}${String(a['id'])}` : '';
  return `${STATUS_LETTER[String(c['status'])] ?? '?'}|${who}`;
}

function change(event: SnapshotEvent, data: Rec, resourceId: string, afterMs: number, observedMs: number): SnapshotChange[] {
  const key = changeKey(event, data);
  return key === null ? [] : [{ event, changeKey: key, resourceId, afterMs, observedMs, data }];
}

const ms = (v: unknown): number => (typeof v === 'string' ? Date.parse(v) : Number.NaN);

export interface ConversationDiff {
  readonly changes: SnapshotChange[];
  /** New states to keep, by id. */
  readonly next: Map<string, string>;
  /** Tracked threads no longer listed (closed): forgotten. */
  readonly gone: string[];
}

/**
 * Diffs the threads listed as open, pending or snoozed against the tracked
 * ones (last refreshed at `refreshedMs`). A tracked thread now `open` that was
 * not is `conversation.opened`; one whose assignee moved to someone is
 * `conversation.assigned`. A thread listed but not tracked was either created
 * since (its assignee, if any, is an assignment) or was closed at the last
 * refresh (every live thread is tracked), so now `open` it was reopened.
 */
export function diffConversations(
  tracked: ReadonlyMap<string, string>,
  listed: readonly Rec[],
  refreshedMs: number,
  now: number,
): ConversationDiff {
  const changes: SnapshotChange[] = [];
  const next = new Map<string, string>();
  const seen = new Set<string>();
  for (const c of listed) {
    const id = String(c['id']);
    if (seen.has(id)) continue;
    seen.add(id);
    const state = encodeConversation(c);
    const before = tracked.get(id);
    if (before === state) continue;
    next.set(id, state);
    const [status, who] = state.split('|') as [string, string];
    if (before !== undefined) {
      const [was, whoWas] = before.split('|') as [string, string];
      if (status === 'o' && was !== 'o') changes.push(...change('conversation.opened', c, id, refreshedMs, now));
      if (who !== '' && who !== whoWas) changes.push(...change('conversation.assigned', c, id, refreshedMs, now));
      continue;
    }
    const created = ms(c['created_at']);
    if (Number.isFinite(created) && created >= refreshedMs - CREATED_OVERLAP_MS) {
      // New since the last refresh: created unassigned, so an assignee is an assignment.
      if (who !== '') changes.push(...change('conversation.assigned', c, id, Math.max(created, refreshedMs - CREATED_OVERLAP_MS), now));
    } else if (status === 'o') {
      changes.push(...change('conversation.opened', c, id, refreshedMs, now));
    }
  }
  const gone = [...tracked.keys()].filter((id) => !seen.has(id));
  return { changes, next, gone };
}

export interface LeadDiff {
  /** Open leads not tracked yet: id → contact id. */
  readonly next: Map<string, string>;
  /** Tracked leads no longer listed as open: id → contact id (their outcome is read by contact). */
  readonly gone: Map<string, string>;
}

/** Diffs the leads listed as open against the tracked ones. */
export function diffLeads(tracked: ReadonlyMap<string, string>, open: readonly Rec[]): LeadDiff {
  const next = new Map<string, string>();
  const listed = new Set<string>();
  for (const l of open) {
    const id = String(l['id']);
    listed.add(id);
    if (!tracked.has(id)) next.set(id, String(l['contact_id']));
  }
  const gone = new Map([...tracked].filter(([id]) => !listed.has(id)));
  return { next, gone };
}

/**
 * What became of tracked leads that left the open listing, from their
 * contacts' leads: won or lost is the event; still open (listed between two
 * pages) stays tracked; not found is forgotten.
 */
export function settledLeads(
  gone: ReadonlyMap<string, string>,
  leads: readonly Rec[],
  refreshedMs: number,
  now: number,
): { changes: SnapshotChange[]; forget: string[] } {
  const byId = new Map(leads.map((l) => [String(l['id']), l]));
  const changes: SnapshotChange[] = [];
  const forget: string[] = [];
  for (const id of gone.keys()) {
    const l = byId.get(id);
    if (l?.['outcome'] === 'open') continue;
    forget.push(id);
    if (l?.['outcome'] === 'won') changes.push(...change('lead.won', l, id, refreshedMs, now));
    if (l?.['outcome'] === 'lost') changes.push(...change('lead.lost', l, id, refreshedMs, now));
  }
  return { changes, forget };
}

/** A lifecycle stage as events carry it. */
export interface Stage {
  readonly id: number;
  readonly name: string;
  readonly role: string | null;
  readonly outcome: string | null;
}

/** A contact's lifecycle block (`include=lifecycle`), when it is one. */
export function stageOf(v: unknown): Stage | null {
  if (typeof v !== 'object' || v === null) return null;
  const s = v as Rec;
  if (typeof s['id'] !== 'number' || typeof s['name'] !== 'string') return null;
  return {
    id: s['id'],
    name: s['name'],
    role: typeof s['role'] === 'string' ? s['role'] : null,
    outcome: typeof s['outcome'] === 'string' ? s['outcome'] : null,
  };
}

export interface ContactDiff {
  readonly changes: SnapshotChange[];
  readonly next: Map<string, string>;
  /** Stages met in the listing (id → stage): the names an event's `previous` needs later. */
  readonly stages: Map<string, Stage>;
}

/**
 * Diffs contacts changed since the last refresh (`updated_after`, with
 * `include=lifecycle`) against their tracked stage: a different stage is
 * `contact.lifecycle_changed`, its `previous` the stage kept here (named from
 * `stages`, the stages seen before). A contact not tracked is new (its stage
 * at creation is in `contact.created`): tracked from now on.
 */
export function diffContacts(
  tracked: ReadonlyMap<string, string | undefined>,
  listed: readonly Rec[],
  stages: ReadonlyMap<string, Stage>,
  refreshedMs: number,
  now: number,
): ContactDiff {
  const changes: SnapshotChange[] = [];
  const next = new Map<string, string>();
  const met = new Map<string, Stage>();
  for (const c of listed) {
    const id = String(c['id']);
    const stage = stageOf(c['lifecycle']);
    if (stage) met.set(String(stage.id), stage);
    const state = stageIdOf(c);
    const before = next.get(id) ?? tracked.get(id);
    if (before === state) continue;
    next.set(id, state);
    if (before === undefined || state === '') continue;
    const lifecycle = stage ?? met.get(state) ?? stages.get(state) ?? unnamed(state);
    const previous = before === '' ? null : (met.get(before) ?? stages.get(before) ?? unnamed(before));
    changes.push(...change('contact.lifecycle_changed', { contact_id: c['id'], previous, lifecycle }, id, refreshedMs, now));
  }
  return { changes, next, stages: met };
}

/** A stage never seen with its name (removed since): its id alone. */
const unnamed = (id: string): Stage => ({ id: Number(id), name: '', role: null, outcome: null });

/** A contact's stage id as kept (`''`: none). */
export function stageIdOf(c: Rec): string {
  const v = c['lifecycle_stage_id'];
  return typeof v === 'number' || typeof v === 'string' ? String(v) : '';
}
