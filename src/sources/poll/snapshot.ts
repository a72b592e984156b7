import { randomUUID } from 'node:crypto';
import type { ApiClient, Page, Paginator } from '../../api/index.js';
import { reconcileDeliveryKey, SNAPSHOT_EVENTS } from '../../events/index.js';
import type { Logger } from '../../log/index.js';
import type { ChangeClaims } from '../../queue/index.js';
import type { RedisClient } from '../../redis/index.js';
import { pollKeys } from './poller.js';
import {
  diffContacts,
  diffConversations,
  diffLeads,
  encodeConversation,
  KIND_EVENTS,
  kindsFor,
  settledLeads,
  stageIdOf,
  stageOf,
  type SnapshotChange,
  type SnapshotKind,
  type Stage,
} from './snapshot-diff.js';
import { readStages, snapshotKeys, SnapshotJournal, SnapshotMap, writeStages } from './snapshot-store.js';

/**
 * The snapshot of the fields whose changes are events (snapshot-diff.ts),
 * kept by the poller's machinery: its world's keys, a lock so one refresh
 * runs at a time across processes, a job scheduler on the `polls` queue
 * (timer.ts, SNAPSHOT_EVERY), low API priority. Each refresh diffs what the
 * listings show against what it kept, writes every change it sees to the
 * journal (before moving the snapshot on: a crash repeats a change, never
 * loses one), and drops from the journal the changes whose delivery arrived.
 * Reconcile (src/sources/reconcile) refreshes too, then turns what is left in
 * the journal into deliveries.
 *
 * Calls per refresh: conversations, one per 100 threads open, pending or
 * snoozed (three listings); leads, one per 50 open leads plus one per contact
 * with a lead that left the open listing; contacts, one per 100 contacts
 * changed since the last refresh (`updated_after`). The baseline lists every
 * contact once.
 */

/** A change seen this recently may still have its webhook on the way: the journal keeps it unchecked. */
export const SETTLE_MS = 60_000;
/** `updated_after` asks this far behind the cursor: a write committed late with an earlier `updated_at` is still seen. */
export const CONTACT_OVERLAP_MS = 60_000;
/** Most pages one listing reads in one refresh (the baseline of 100 000 contacts is 1 000). */
const MAX_PAGES = 2_000;

/** The reads the snapshot makes. */
export type SnapshotApi = Pick<ApiClient, 'contacts' | 'conversations' | 'leads'>;

export interface SnapshotDeps {
  readonly redis: RedisClient;
  readonly prefix: string;
  /** The world the records belong to (src/queue/world.ts); null: a real workspace. */
  readonly world: string | null;
  readonly api: SnapshotApi;
  readonly log: Logger;
  /** Change claims of this world: which changes in the journal were received. */
  readonly claims: Pick<ChangeClaims, 'received'>;
  /** A journal entry older than this (DEDUPE_TTL) is dropped: its claim would be forgotten too. */
  readonly ttlMs: number;
  /** Longest a refresh may hold the lock. */
  readonly lockMs: number;
  readonly now?: () => number;
}

export interface KindReport {
  readonly baseline: boolean;
  /** Records listed. */
  readonly listed: number;
  /** Changes seen (written to the journal). */
  readonly changes: number;
}

export interface RefreshReport {
  /** False when another refresh held the lock (and, with `waitMs`, still did after it). */
  readonly ran: boolean;
  readonly kinds: Partial<Record<SnapshotKind, KindReport>>;
  /** Journal entries dropped: received, or older than DEDUPE_TTL. */
  readonly dropped: number;
  /** Journal entries left: changes not (yet) known received. */
  readonly pending: number;
}

const RELEASE = 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0';

function parts(deps: SnapshotDeps) {
  const poll = pollKeys(deps.prefix, deps.world);
  const keys = snapshotKeys(poll.snapshot);
  return { lock: poll.snapshotLock, keys, journal: new SnapshotJournal(deps.redis, keys.journal) };
}

/** The kinds whose baseline was taken (in this world). */
export async function trackedKinds(deps: Pick<SnapshotDeps, 'redis' | 'prefix' | 'world'>): Promise<SnapshotKind[]> {
  const keys = snapshotKeys(pollKeys(deps.prefix, deps.world).snapshot);
  const all: SnapshotKind[] = ['conversations', 'leads', 'contacts'];
  const at = await Promise.all(all.map((k) => deps.redis.hget(keys.meta(k), 'at')));
  return all.filter((_, i) => at[i] !== null);
}

/**
 * One refresh of the kinds asked for: a baseline for a kind that has none,
 * else a diff into the journal. With `waitMs`, waits that long for another
 * refresh's lock (reconcile); without, a tick that finds it held does nothing.
 */
export async function refreshSnapshot(deps: SnapshotDeps, kinds: readonly SnapshotKind[], waitMs = 0): Promise<RefreshReport> {
  const { lock, journal } = parts(deps);
  const token = randomUUID();
  const give = Date.now() + waitMs;
  while ((await deps.redis.set(lock, token, 'PX', deps.lockMs, 'NX')) !== 'OK') {
    if (Date.now() >= give) return { ran: false, kinds: {}, dropped: 0, pending: (await journal.all()).length };
    await new Promise((r) => setTimeout(r, 200));
  }
  try {
    const report: Partial<Record<SnapshotKind, KindReport>> = {};
    for (const kind of kinds) report[kind] = await refreshKind(deps, kind);
    const { dropped, pending } = await pruneJournal(deps);
    const seen = Object.values(report).reduce((n, k) => n + k.changes, 0);
    if (seen) deps.log.info({ snapshot: report, pending }, `snapshot: ${seen} changes seen; ${pending} not known received yet`);
    return { ran: true, kinds: report, dropped, pending };
  } finally {
    await deps.redis.eval(RELEASE, 1, lock, token);
  }
}

/**
 * Every record of a listing that takes a cursor, page by page, noting the
 * API's clock from each answer's `Date` header (the poller's clock offset):
 * the snapshot's times are on the API's clock, so a webhook's event time is
 * compared with them within a second or two, not the minute two clocks may differ.
 */
async function listTimed<T>(deps: SnapshotDeps, list: (cursor: string | undefined) => Paginator<T>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const r = await list(cursor).firstPage().withResponse();
    const date = Date.parse(r.headers.get('date') ?? '');
    if (Number.isFinite(date)) await deps.redis.set(pollKeys(deps.prefix, deps.world).clockOffset, String(date - (deps.now ?? Date.now)()));
    out.push(...r.data.data);
    if (!r.data.nextCursor) break;
    cursor = r.data.nextCursor;
  }
  return out;
}

/** Every record of a listing, page by page. */
async function listAll<T>(pages: AsyncIterable<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let n = 0;
  for await (const page of pages) {
    out.push(...page.data);
    if (++n >= MAX_PAGES) break;
  }
  return out;
}

type Rec = Readonly<Record<string, unknown>>;

async function refreshKind(deps: SnapshotDeps, kind: SnapshotKind): Promise<KindReport> {
  const { keys, journal } = parts(deps);
  const now = deps.now ?? Date.now;
  const map = new SnapshotMap(deps.redis, keys, kind);
  const meta = await deps.redis.hgetall(keys.meta(kind));
  const baseline = meta['at'] === undefined;
  const refreshedMs = Number(meta['at']);
  const api = deps.api;
  // The API's clock (its Date header, whole seconds, so a little behind): when this refresh began, there.
  const offset = Number(await deps.redis.get(pollKeys(deps.prefix, deps.world).clockOffset)) || 0;
  const observed = now();
  const started = observed + offset - 1_000;
  let listed: number;
  let changes: SnapshotChange[] = [];
  const metaNext: Record<string, string> = { at: String(started) };
  if (kind === 'conversations') {
    const rows = (
      await Promise.all(
        (['open', 'pending', 'snoozed'] as const).map((status) =>
          listTimed(deps, (cursor) => api.conversations.list({ status, per_page: 100, ...(cursor ? { cursor } : {}) })),
        ),
      )
    ).flat() as Rec[];
    listed = rows.length;
    if (baseline) await map.set(new Map(rows.map((c) => [String(c['id']), encodeConversation(c)])));
    else {
      const diff = diffConversations(await map.all(), rows, refreshedMs, observed);
      changes = diff.changes;
      await journal.add(changes);
      await map.set(diff.next, diff.gone);
    }
  } else if (kind === 'leads') {
    const rows = (await listAll(api.leads.list({ outcome: 'open' }).pages())) as Rec[];
    listed = rows.length;
    if (baseline) await map.set(new Map(rows.map((l) => [String(l['id']), String(l['contact_id'])])));
    else {
      const diff = diffLeads(await map.all(), rows);
      const contacts = [...new Set(diff.gone.values())].filter((c) => /^\d+$/.test(c));
      const theirs = (await Promise.all(contacts.map((c) => listAll(api.leads.list({ contact_id: Number(c) }).pages())))).flat() as Rec[];
      const settled = settledLeads(diff.gone, theirs, refreshedMs, observed);
      changes = settled.changes;
      await journal.add(changes);
      await map.set(diff.next, settled.forget);
    }
  } else {
    const cursor = meta['cursor'];
    const since = baseline || cursor === undefined ? undefined : new Date(Date.parse(cursor) - CONTACT_OVERLAP_MS);
    const rows = (await listTimed(deps, (c) =>
      api.contacts.list({ include: ['lifecycle'], per_page: 100, ...(since ? { updated_after: since } : {}), ...(c ? { cursor: c } : {}) }),
    )) as Rec[];
    listed = rows.length;
    // The next refresh asks from this one's start on the API's clock (not the latest updated_at listed: a record
    // dated ahead of the API's present would hide every change until then).
    metaNext['cursor'] = new Date(started).toISOString();
    const stageOfRow = (c: Rec): [string, Stage][] => {
      const s = stageOf(c['lifecycle']);
      return s ? [[String(s.id), s]] : [];
    };
    if (baseline) {
      await map.set(new Map(rows.map((c) => [String(c['id']), stageIdOf(c)])));
      await writeStages(deps.redis, keys.stages, new Map(rows.flatMap(stageOfRow)));
    } else {
      const ids = [...new Set(rows.map((c) => String(c['id'])))];
      const diff = diffContacts(await map.get(ids), rows, await readStages(deps.redis, keys.stages), refreshedMs, observed);
      changes = diff.changes;
      await journal.add(changes);
      await map.set(diff.next);
      await writeStages(deps.redis, keys.stages, diff.stages);
    }
  }
  await deps.redis.hset(keys.meta(kind), metaNext);
  if (baseline)
    deps.log.info({ kind, records: listed }, `snapshot: ${kind} baseline taken; their changes from now on are recoverable by reconcile`);
  return { baseline, listed, changes: changes.length };
}

/** Drops journal entries whose change was received (settled ones only) or that outlived DEDUPE_TTL. */
async function pruneJournal(deps: SnapshotDeps): Promise<{ dropped: number; pending: number }> {
  const { journal } = parts(deps);
  const now = (deps.now ?? Date.now)();
  const all = await journal.all();
  const old = all.filter((c) => c.observedMs < now - deps.ttlMs);
  const settled = all.filter((c) => c.observedMs <= now - SETTLE_MS && c.observedMs >= now - deps.ttlMs);
  const received = await deps.claims.received(
    settled.map((c) => ({
      changeKey: c.changeKey,
      afterMs: c.afterMs,
      deliveryKey: reconcileDeliveryKey(c.changeKey, deps.world, c.afterMs),
    })),
  );
  const drop = [...old, ...settled.filter((_, i) => received[i])];
  await journal.drop(drop);
  return { dropped: drop.length, pending: all.length - drop.length };
}

/**
 * What reconcile takes from the snapshot: a refresh (waiting for a running
 * one), then the journal's changes whose state before was seen before the
 * window's end and that were seen in or after its start.
 */
export async function snapshotChanges(
  deps: SnapshotDeps,
  kinds: readonly SnapshotKind[],
  window: { since: number; until: number },
): Promise<{ refreshed: boolean; changes: SnapshotChange[] }> {
  const r = kinds.length ? await refreshSnapshot(deps, kinds, deps.lockMs) : { ran: false };
  const all = await parts(deps).journal.all();
  return { refreshed: r.ran, changes: all.filter((c) => c.observedMs >= window.since && c.afterMs < window.until) };
}

/** Drops changes from the journal (reconcile: found received). */
export async function forgetChanges(
  deps: Pick<SnapshotDeps, 'redis' | 'prefix' | 'world'>,
  changes: readonly SnapshotChange[],
): Promise<void> {
  await new SnapshotJournal(deps.redis, snapshotKeys(pollKeys(deps.prefix, deps.world).snapshot).journal).drop(changes);
}

/** The snapshot as reconcile reads it: the kinds with a baseline that the wanted events need. */
export function snapshotSource(deps: SnapshotDeps) {
  return {
    async changes(window: { since: number; until: number }, wanted: ReadonlySet<string>) {
      const tracked = await trackedKinds(deps);
      const kinds = kindsFor(wanted).filter((k) => tracked.includes(k));
      const untracked = SNAPSHOT_EVENTS.filter((e) => wanted.has(e) && !kinds.some((k) => KIND_EVENTS[k].includes(e)));
      const { changes } = await snapshotChanges(deps, kinds, window);
      return { changes: changes.filter((c) => kinds.some((k) => KIND_EVENTS[k].includes(c.event))), untracked };
    },
    forget: (changes: readonly SnapshotChange[]) => forgetChanges(deps, changes),
  };
}
