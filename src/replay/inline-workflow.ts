import { validateEvent, type WorkspaceEvent, parseEnvelope } from '../events/index.js';
import { type Handler, NO_WORKFLOW } from '../handler/index.js';
import { maskPersonalText } from '../pii/index.js';
import { formatDuration } from '../util/index.js';
import {
  type VirtualStateStore,
  virtualWorkflow,
  withVirtualWorkflow,
  type Arrival,
  type WorkflowEntry,
  type WorkflowRecord,
} from '../worker/index.js';
import { printableBody } from './dry-run.js';
import type { ReplayItem } from './inputs.js';

/**
 * Workflows in `replay --inline`: no Redis to park a run in, so each run goes
 * to its end on a virtual clock (src/worker/virtual-workflow.ts, the one
 * switchyard/testing's testHandler uses): a sleep passes at once; a wait is
 * answered by the first matching event of the replay's input received after
 * the run's own (the worker's rules: match key, lookback, timeout), else
 * returns null as a timeout; `cancelOn` is checked against the same events;
 * `ctx.state` is kept in memory for the whole replay, per handler and key.
 * Each sleep, wait and state access is printed under the handler's line.
 */

/** An event of the replay's input, with its delivery key. */
export type InputArrival = Arrival & { readonly key: string };

/**
 * When a delivery counts as received on the virtual clock: the fixture's
 * `received_at`, else the envelope's `created_at` (as `--since` reads it);
 * null when it has neither.
 */
export function receiptOf(item: ReplayItem, event: WorkspaceEvent): number | null {
  const t = Date.parse(item.receivedAt ?? event.createdAt ?? '');
  return Number.isFinite(t) ? t : null;
}

/** The valid events of the replay's input, as waits and `cancelOn` see them (one without a time is left out). */
export function inputArrivals(items: readonly ReplayItem[]): InputArrival[] {
  const out: InputArrival[] = [];
  for (const item of items) {
    const envelope = parseEnvelope(item.bytes);
    const result = validateEvent(envelope);
    if (!result.ok) continue;
    const at = receiptOf(item, result.event);
    if (at !== null) out.push({ event: result.event, at, key: envelope.key });
  }
  return out;
}

/** What {@link replayWorkflow} needs for one run. */
export interface ReplayRun {
  readonly handler: Handler;
  readonly event: WorkspaceEvent;
  /** The delivery's key: its own event is not one its waits see. */
  readonly key: string;
  readonly receivedAt: number;
  readonly arrivals: readonly InputArrival[];
  /** The handler's state for this replay. */
  readonly state: VirtualStateStore;
  readonly onEntry: (entry: WorkflowEntry) => void;
}

/** `run.handler` with the virtual workflow members in its `ctx`; `record()` after the run says whether it was cancelled. */
export function replayWorkflow(run: ReplayRun): { handler: Handler; record: () => WorkflowRecord | undefined } {
  const policy = run.handler.workflow ?? NO_WORKFLOW;
  const events = run.arrivals.filter((a) => a.key !== run.key);
  return withVirtualWorkflow(run.handler, (onCancel) =>
    virtualWorkflow({
      handlerId: run.handler.id,
      policy,
      own: { event: run.event, receivedAt: run.receivedAt },
      events,
      state: run.state,
      onCancel,
      onEntry: run.onEntry,
    }),
  );
}

const MAX_VALUE = 200;

/** A state value as printed: secret-named fields `[redacted]`, emails and phone numbers masked (as in logs), at most 200 characters. */
export function printableState(value: unknown): string {
  const text = maskPersonalText(JSON.stringify(printableBody(value)) ?? 'null');
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

const eventRef = (e: WorkspaceEvent | undefined, at: string | undefined): string =>
  `${e?.name ?? 'an event'}${e?.id ? ` ${e.id}` : ''}${at ? ` received ${at}` : ''}`;

/** The line of one sleep, wait or state access of a replayed run. */
export function describeEntry(entry: WorkflowEntry): string {
  if (entry.type === 'state') {
    const { op, key, value } = entry.access;
    const shown = printableState(value);
    const what = `state ${op} (${maskPersonalText(key)})`;
    if (op === 'get') return `${what} → ${shown}${value === null ? ' (none set)' : ''}`;
    return `${what} ← ${shown} (in memory for this replay)`;
  }
  const { wait, waitedFor, eventAt } = entry;
  const span = Date.parse(wait.due) - Date.parse(wait.startedAt);
  if (wait.kind === 'sleep') {
    const head = `sleep "${wait.name}" ${formatDuration(span)}`;
    if (wait.outcome === 'cancelled')
      return `${head} — cancelled by ${eventRef(wait.event, eventAt)} (cancelOn, from the replay input): nothing after it runs`;
    if (span <= 0) return `${head} — already due (${wait.due}): returns at once`;
    return `${head} — skipped (inline replay does not wait; due ${wait.due})`;
  }
  const head = `wait "${wait.name}" for ${waitedFor ?? 'an event'} (timeout ${formatDuration(span)})`;
  if (wait.outcome === 'matched') return `${head} — answered by ${eventRef(wait.event, eventAt)} (from the replay input)`;
  if (wait.outcome === 'cancelled')
    return `${head} — cancelled by ${eventRef(wait.event, eventAt)} (cancelOn, from the replay input): nothing after it runs`;
  return `${head} — timed out: no matching event in the replay input before ${wait.due}; returns null (inline replay does not wait)`;
}
