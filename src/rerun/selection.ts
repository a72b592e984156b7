import { suggestEventName } from '../events/index.js';
import type { Handler } from '../handler/index.js';
import { PENDING_STATES, listDeliveries, type DeliveryFilter, type DeliverySummary } from '../history/index.js';
import { closest } from '../util/index.js';
import type { RerunDeps } from './deps.js';

/**
 * Which deliveries to run again, and by which handler: the `deliveries` filters (`--event`, `--conversation`,
 * `--contact`, `--outcome`: the handler's latest state, `--since`, `--where`: the content of the kept body).
 * Without `event`, every event the handler subscribes to. At most `limit` deliveries (default 100 000), newest first.
 */
export type RerunSelection = { readonly handler: string } & Omit<DeliveryFilter, 'handler' | 'scanMax'>;

/** One delivery of a batch's frozen selection. */
export interface RerunItem {
  readonly key: string;
  readonly event: string;
  readonly receivedAt: string | null;
}

/** The selection could not be made as asked (an unknown handler, an event it does not handle): said as it is. */
export class RerunSelectionError extends Error {
  readonly code = 'rerun_selection';
  constructor(message: string) {
    super(message);
    this.name = 'RerunSelectionError';
  }
}

/** Runs that have not run yet (or are parked in a sleep or wait): they run anyway, so they are not re-run. */
const NOT_RUN = new Set([...PENDING_STATES, 'wait']);

/** The handler a selection names, checked against the project's handlers and the events asked for. */
export function selectedHandler(handlers: readonly Handler[], selection: RerunSelection): Handler {
  const h = handlers.find((x) => x.id === selection.handler);
  if (!h) {
    const ids = handlers.map((x) => x.id);
    const hint = closest(selection.handler, ids);
    throw new RerunSelectionError(
      `no handler "${selection.handler}" in this project` +
        (hint ? `; did you mean "${hint}"?` : ids.length ? ` (handlers: ${ids.join(', ')})` : ' (no handler modules were found)'),
    );
  }
  const asked = selection.event !== undefined ? [selection.event] : (selection.where?.events ?? []);
  const handled = asked.filter((e) => (h.on as readonly string[]).includes(e));
  if (selection.event !== undefined && handled.length === 0) {
    const e = selection.event;
    const hint = suggestEventName(e);
    throw new RerunSelectionError(
      `handler "${h.id}" does not handle ${e}${hint && hint !== e ? ` (did you mean "${hint}"?)` : ''}; it is subscribed to ${h.on.join(', ')}`,
    );
  }
  if (selection.event === undefined && selection.where && handled.length === 0) {
    throw new RerunSelectionError(
      `--where ${selection.where.conditions.map((c) => c.text).join(' ')}: only events ${asked.join(', ')} have those fields, ` +
        `and handler "${h.id}" handles none of them (it is subscribed to ${h.on.join(', ')})`,
    );
  }
  if (selection.outcome !== undefined && NOT_RUN.has(selection.outcome === 'pending' ? 'queued' : selection.outcome)) {
    throw new RerunSelectionError(
      `--outcome ${selection.outcome}: those runs have not run yet (or are parked in a sleep or wait); they run anyway, so they cannot be re-run`,
    );
  }
  return h;
}

/** What the history holds for a selection: the deliveries to run again, and the ones left out with why. */
export interface Selected {
  readonly handler: Handler;
  readonly items: readonly RerunItem[];
  readonly summaries: readonly DeliverySummary[];
  readonly skipped: ReadonlyMap<string, number>;
  readonly scanned: number;
  /** The history holds more than was read (the limit, or the scan's bound). */
  readonly more: boolean;
}

/** Reads the selection from the delivery history, newest first; runs not run yet and other handlers' events are left out. */
export async function selectDeliveries(deps: RerunDeps, selection: RerunSelection): Promise<Selected> {
  const handler = selectedHandler(deps.handlers, selection);
  const events = new Set<string>(selection.event !== undefined ? [selection.event] : handler.on);
  const limit = selection.limit ?? 100_000;
  const { handler: _h, ...filter } = selection;
  const listed = await listDeliveries(deps.redis, deps.prefix, {
    ...filter,
    handler: handler.id,
    limit,
    scanMax: Math.max(limit * 20, 1_000_000),
  });
  const skipped = new Map<string, number>();
  const skip = (why: string, n = 1) => skipped.set(why, (skipped.get(why) ?? 0) + n);
  if (listed.withoutBody > 0) skip('its body is not kept, so --where cannot match it (KEEP_BODIES)', listed.withoutBody);
  if (listed.unreadable > 0) skip('its kept body could not be read (another version, or damaged)', listed.unreadable);
  const summaries: DeliverySummary[] = [];
  for (const s of listed.deliveries) {
    const state = s.handlers[handler.id] ?? '';
    if (s.event === null || !events.has(s.event)) skip(`an event ${handler.id} no longer handles (${s.event ?? 'unknown'})`);
    else if (NOT_RUN.has(state)) skip(state === 'wait' ? 'parked in a sleep or wait (it runs anyway)' : 'not run yet (it runs anyway)');
    else summaries.push(s);
  }
  const items = summaries.map((s) => ({ key: s.key, event: s.event as string, receivedAt: s.receivedAt }));
  return { handler, items, summaries, skipped, scanned: listed.scanned, more: listed.more };
}
