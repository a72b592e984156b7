import { suggestEventName } from '../events/index.js';
import type { Handler } from '../handler/index.js';
import { PENDING_STATES, listDeliveries, type DeliverySummary } from '../history/index.js';
import { closest } from '../util/index.js';
import type { RerunDeps } from './deps.js';

/** Which deliveries to run again, and by which handler: the `deliveries` filters. */
export interface RerunSelection {
  /** The handler to run again (its id, as `switchyard handlers` lists it). */
  readonly handler: string;
  /** Event names (default: every event the handler subscribes to). */
  readonly events?: readonly string[];
  readonly conversation?: string;
  readonly contact?: string;
  /** The handler's latest state on the delivery (`completed`, `dead`, …); `pending` and `wait` cannot be re-run. */
  readonly outcome?: string;
  /** Received at or after (epoch ms). */
  readonly since?: number;
  /** At most this many deliveries (default 100 000), newest first. */
  readonly limit?: number;
}

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
  for (const e of selection.events ?? []) {
    if ((h.on as readonly string[]).includes(e)) continue;
    const hint = suggestEventName(e);
    throw new RerunSelectionError(
      `handler "${h.id}" does not handle ${e}${hint && hint !== e ? ` (did you mean "${hint}"?)` : ''}; it is subscribed to ${h.on.join(', ')}`,
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
  const events = new Set<string>(selection.events?.length ? selection.events : handler.on);
  const limit = selection.limit ?? 100_000;
  const listed = await listDeliveries(deps.redis, deps.prefix, {
    handler: handler.id,
    ...(events.size === 1 ? { event: [...events][0] as string } : {}),
    ...(selection.conversation !== undefined ? { conversation: selection.conversation } : {}),
    ...(selection.contact !== undefined ? { contact: selection.contact } : {}),
    ...(selection.outcome !== undefined ? { outcome: selection.outcome } : {}),
    ...(selection.since !== undefined ? { since: selection.since } : {}),
    limit,
    scanMax: Math.max(limit * 20, 1_000_000),
  });
  const skipped = new Map<string, number>();
  const skip = (why: string) => skipped.set(why, (skipped.get(why) ?? 0) + 1);
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
