import { CHANGE_KEY_EVENTS, reconcileDeliveryKey, SNAPSHOT_EVENTS, type ChangeKeyEvent } from '../../events/index.js';
import { printable } from '../../util/index.js';
import type { SnapshotChange } from '../poll/snapshot-diff.js';
import type { ChangeClaims, DeliverySink } from '../../queue/index.js';
import type { Window } from './infer.js';
import { synthesize } from './synthesize.js';
import { inferChanges, type ReconcileApi } from './walk.js';

/** Counts of one event in a reconcile report. */
export interface EventCounts {
  /** Changes the listings imply in the window. */
  found: number;
  /** Of those, already received (a delivery of the change was dispatched: its change key is claimed). */
  received: number;
  /** Synthesized and stored now (a dry run: would be). */
  enqueued: number;
  /** Synthesized by an earlier reconcile and still on their way to fan-out. */
  pending: number;
  /** A few resource ids of the enqueued (or, in a dry run, missing) changes. */
  examples: string[];
}

/** What a reconcile found and did. */
export interface ReconcileReport {
  since: string;
  until: string;
  dryRun: boolean;
  /** API calls made (attempts, retries included), when the caller counted them. */
  apiCalls: number;
  durationMs: number;
  events: Partial<Record<ChangeKeyEvent, EventCounts>>;
  totals: Omit<EventCounts, 'examples'>;
  /**
   * Events asked for that only the snapshot recovers and whose records it does
   * not track (no worker keeps it: no loaded handler subscribes to them, or
   * SNAPSHOT_EVERY is off). `lead.won`/`lead.lost` of leads created in the
   * window are still found from the listing.
   */
  untracked: ChangeKeyEvent[];
}

/** Where reconcile reads the changes its snapshot saw (src/sources/poll/snapshot.ts). */
export interface SnapshotSource {
  /** Refreshes the snapshot, then gives the changes seen in the window not known received, and the events it does not track. */
  changes(window: Window, wanted: ReadonlySet<ChangeKeyEvent>): Promise<{ changes: SnapshotChange[]; untracked: ChangeKeyEvent[] }>;
  /** Drops changes found received from the journal. */
  forget(changes: readonly SnapshotChange[]): Promise<void>;
}

export interface ReconcileOptions {
  api: ReconcileApi;
  claims: Pick<ChangeClaims, 'claimed'> & Partial<Pick<ChangeClaims, 'received'>>;
  /**
   * The snapshot of event fields: conversation.opened/assigned, contact.lifecycle_changed, lead outcomes. Absent: those
   * are not inferred.
   */
  snapshot?: SnapshotSource | null;
  /** Where synthesized deliveries go (the IngestStore); null: a dry run. */
  sink: Pick<DeliverySink, 'put'> | null;
  window: Window;
  /** Events to infer (default every event that has a change key). */
  events?: readonly ChangeKeyEvent[];
  /** API calls made so far (read before and after). */
  apiCalls?: () => number;
  now?: () => number;
  /** The world the claims were made in (src/queue/world.ts; null: a real workspace). */
  world?: string | null;
  /** Example ids kept per event (default 5). */
  examples?: number;
}

/**
 * Lists what changed upstream in the window, infers the events it implies,
 * and stores a synthesized delivery (src/sources/reconcile/synthesize.ts) for each
 * one whose change was not received. The change-level dedupe at fan-out makes
 * it safe against a reconcile running twice and a real delivery arriving late.
 */
export async function reconcile(opts: ReconcileOptions): Promise<ReconcileReport> {
  const now = opts.now ?? Date.now;
  const started = now();
  const calls0 = opts.apiCalls?.() ?? 0;
  const wanted = new Set<ChangeKeyEvent>(opts.events ?? CHANGE_KEY_EVENTS);
  const maxExamples = opts.examples ?? 5;
  const events: Partial<Record<ChangeKeyEvent, EventCounts>> = {};
  for (const e of CHANGE_KEY_EVENTS) if (wanted.has(e)) events[e] = { found: 0, received: 0, enqueued: 0, pending: 0, examples: [] };
  const seen = new Set<string>();
  const world = opts.world ?? null;
  const tally = (c: EventCounts, outcome: 'received' | 'accepted' | 'duplicate' | 'spooled', id: string) => {
    if (outcome === 'received') c.received++;
    else if (outcome === 'duplicate') c.pending++;
    else {
      c.enqueued++;
      if (c.examples.length < maxExamples) c.examples.push(id);
    }
  };
  let untracked: ChangeKeyEvent[] = (SNAPSHOT_EVENTS as readonly ChangeKeyEvent[]).filter((e) => wanted.has(e));
  if (opts.snapshot) {
    // First the snapshot's changes: a lead won in the window is found there with the time its open state was last seen.
    const snap = await opts.snapshot.changes(opts.window, wanted);
    untracked = snap.untracked;
    const changes = snap.changes.filter((c) => wanted.has(c.event));
    for (const c of changes) seen.add(c.changeKey);
    if (!opts.claims.received) throw new Error('reconcile with a snapshot needs claims.received');
    const received = await opts.claims.received(
      changes.map((c) => ({
        changeKey: c.changeKey,
        afterMs: c.afterMs,
        deliveryKey: reconcileDeliveryKey(c.changeKey, world, c.afterMs),
      })),
    );
    const receivedAt = new Date(now()).toISOString();
    await Promise.all(
      changes.map(async (c, i) => {
        const counts = events[c.event] as EventCounts;
        counts.found++;
        if (received[i]) return tally(counts, 'received', c.resourceId);
        const inferred = { event: c.event, changeKey: c.changeKey, resourceId: c.resourceId, at: null, data: c.data, afterMs: c.afterMs };
        tally(counts, opts.sink ? await opts.sink.put(synthesize(inferred, receivedAt, world)) : 'accepted', c.resourceId);
      }),
    );
    await opts.snapshot.forget(changes.filter((_, i) => received[i]));
  }
  for await (const batch of inferChanges(opts.api, opts.window, wanted)) {
    const fresh = batch.filter((e) => !seen.has(e.changeKey));
    if (fresh.length === 0) continue;
    for (const e of fresh) seen.add(e.changeKey);
    const claimed = await opts.claims.claimed(fresh.map((e) => e.changeKey));
    const receivedAt = new Date(now()).toISOString();
    await Promise.all(
      fresh.map(async (e, i) => {
        const c = events[e.event] as EventCounts;
        c.found++;
        if (claimed[i]) return tally(c, 'received', e.resourceId);
        tally(c, opts.sink ? await opts.sink.put(synthesize(e, receivedAt, world)) : 'accepted', e.resourceId);
      }),
    );
  }
  const totals = { found: 0, received: 0, enqueued: 0, pending: 0 };
  for (const c of Object.values(events)) {
    totals.found += c.found;
    totals.received += c.received;
    totals.enqueued += c.enqueued;
    totals.pending += c.pending;
  }
  return {
    since: new Date(opts.window.since).toISOString(),
    until: new Date(opts.window.until).toISOString(),
    dryRun: opts.sink === null,
    apiCalls: (opts.apiCalls?.() ?? 0) - calls0,
    durationMs: now() - started,
    events,
    totals,
    untracked,
  };
}

const UNTRACKED = 'not tracked by the snapshot (no worker keeps it for them: a loaded handler subscribing, SNAPSHOT_EVERY on)';

/** The report as text: a line per event, then the totals. */
export function formatReport(r: ReconcileReport): string {
  const verb = r.dryRun ? 'missing' : 'enqueued';
  const rows = Object.entries(r.events).map(([name, c]) => [
    name,
    String(c.found),
    String(c.received),
    String(c.enqueued),
    String(c.pending),
    printable(c.examples.join(' ')),
  ]);
  const head = ['EVENT', 'FOUND', 'RECEIVED', verb.toUpperCase(), 'PENDING', 'EXAMPLES (ids)'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const t = r.totals;
  return (
    `reconcile ${r.since} → ${r.until}${r.dryRun ? ' (dry run: nothing enqueued)' : ''}\n` +
    `${[line(head), ...rows.map(line)].join('\n')}\n` +
    `${t.found} found, ${t.received} already received, ${t.enqueued} ${verb}, ${t.pending} pending; ` +
    `${r.apiCalls} API calls in ${(r.durationMs / 1000).toFixed(1)} s\n` +
    (r.untracked.length ? `${UNTRACKED}: ${r.untracked.join(', ')}\n` : '')
  );
}
