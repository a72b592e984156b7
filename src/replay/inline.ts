import { createHash, randomBytes } from 'node:crypto';
import { IdempotencyKeyReusedError, type CallEvent } from '../api/index.js';
import { validateEvent, type WorkspaceEvent, parseEnvelope } from '../events/index.js';
import { type Handler, readHandlerSettings } from '../handler/index.js';
import type { Logger } from '../log/index.js';
import {
  subscribers,
  type RunOutcome,
  MemoryStepStore,
  type StoredState,
  type VirtualStateStore,
  type WorkflowEntry,
} from '../worker/index.js';
import { createDryRun, describeDryWrite, type DryRun, type DryWrite } from './dry-run.js';
import { describeEntry, inputArrivals, receiptOf, replayWorkflow } from './inline-workflow.js';
import type { ReplayItem } from './inputs.js';
import { inlineJob, runInline } from './inline-run.js';
import type { ReplayOutcome, ReplayTarget } from './targets.js';

export { inlineJob, runInline, type InlineRunDeps } from './inline-run.js';

export interface InlineOptions {
  handlers: readonly Handler[];
  /** WORKSPACE_API_URL / WORKSPACE_API_TOKEN; without them a handler that calls the API fails with that reason. */
  api: { baseUrl: string; token: string; burst: number } | undefined;
  /** Environment the handlers' settings are parsed from (throws HandlerSettingsError at once when one is bad). */
  env: Readonly<Record<string, string | undefined>>;
  log: Logger;
  signal?: AbortSignal;
  fetch?: typeof fetch;
  now?: () => Date;
  /**
   * Send the worker's own Idempotency-Keys (derived from delivery, handler and
   * step, or given by the handler). Default false: the keys of one replay run
   * are scoped to it, so replaying after editing a handler writes afresh
   * instead of failing with IdempotencyKeyReusedError (the API remembers a
   * key for 24 hours and refuses it with a different body).
   */
  reuseKeys?: boolean;
  /**
   * `--dry-run`: reads go to the API, writes are not sent (see `createDryRun`):
   * each is answered as a success built from the request, its line says
   * `(dry)`, and the call it would have been (method, path, Idempotency-Key,
   * body) is printed under it and passed to `onDryWrite`.
   */
  dryRun?: boolean;
  /** Each write a dry run did not send, with the delivery key and the handler that made it. */
  onDryWrite?: (write: DryWriteReport) => void;
  /**
   * The replay's whole input (before filters): the events a workflow's waits
   * may be answered by and its `cancelOn` may be triggered by (see
   * ./inline-workflow.ts). Default none: every wait times out.
   */
  input?: readonly ReplayItem[];
  /** The workspace replayed (its Config's workspaceId): each run's `ctx.workspace.id`; default `default`. */
  workspace?: string | undefined;
}

/** A write the dry run did not send, as `--json` lists it. */
export type DryWriteReport = DryWrite & { delivery: string; handler: string };

/**
 * A fetch that scopes every Idempotency-Key to one replay run: `key` becomes a
 * hash of (run salt, key). Within the run a key maps to the same value, so
 * retries still replay; a later run sends different keys.
 */
export function runScopedFetch(base: typeof fetch, salt: string = randomBytes(12).toString('hex')): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    const key = headers.get('idempotency-key');
    if (key === null) return base(input, init);
    headers.set('idempotency-key', `sy_replay_${createHash('sha256').update(`${salt}\u0000${key}`).digest('base64url').slice(0, 32)}`);
    return base(input, { ...init, headers });
  };
}

const REUSED_HINT =
  'the API already saw this Idempotency-Key with a different body (the handler or the delivery changed since a run with the same keys): ' +
  'replay without --reuse-keys to give this run fresh keys';
const SAME_RUN_HINT =
  'the handler sent two different bodies with one Idempotency-Key in this run: a key it sets itself must change with what it sends';

/** One line per API call: method, operation, status, whether the API replayed a stored answer, and `dry` for a write a dry run answered. */
export function describeCall(c: CallEvent, dry = false): string {
  const status = c.status === 0 ? 'no answer' : String(c.status);
  const notes = [
    dry ? 'dry' : '',
    c.replayed ? 'replayed' : '',
    c.attempt > 1 ? `attempt ${c.attempt}` : '',
    c.willRetry ? 'will retry' : '',
    c.error && !c.willRetry ? c.error.message : '',
  ]
    .filter(Boolean)
    .join(', ');
  return `${c.method.padEnd(6)} ${c.op} → ${status}${notes ? ` (${notes})` : ''}`;
}

/**
 * `--inline`: no Redis at all. Validates each delivery against the catalogue
 * (an invalid one is `rejected` with the reason the worker would dead-letter
 * it with) and runs every subscribed handler in this process with
 * `runHandler`, exactly as the worker does, with in-memory steps. Each
 * handler's outcome and API calls become the outcome's lines; any handler
 * failure makes the delivery `failed`. With `dryRun` no write is sent: see
 * `createDryRun` (one dry run for the whole replay, so its records and dry
 * ids are shared by every delivery). A workflow runs to its end without
 * waiting (./inline-workflow.ts): its sleeps, waits and state accesses are
 * printed in order with its API calls; a run a `cancelOn` event cancelled is
 * not a failure.
 */
export function inlineTarget(opts: InlineOptions): ReplayTarget {
  const now = opts.now ?? (() => new Date());
  const baseFetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  const r: InlineReplay = {
    opts,
    steps: new MemoryStepStore(),
    now,
    baseFetch,
    salt: randomBytes(12).toString('hex'),
    dry: opts.dryRun && opts.api ? createDryRun(baseFetch, { baseUrl: opts.api.baseUrl, now }) : undefined,
    signal: opts.signal ?? new AbortController().signal,
    settings: readHandlerSettings(opts.handlers, opts.env),
    arrivals: inputArrivals(opts.input ?? []),
    states: new Map<string, VirtualStateStore>(),
  };
  return (item: ReplayItem) => replayInline(r, item);
}

/** What the deliveries of one inline replay share. */
interface InlineReplay {
  readonly opts: InlineOptions;
  /** In-memory steps, as the worker's Redis ones. */
  readonly steps: MemoryStepStore;
  readonly now: () => Date;
  readonly baseFetch: typeof fetch;
  /** Scopes this replay's Idempotency-Keys (see {@link runScopedFetch}). */
  readonly salt: string;
  /** One dry run for the whole replay (`dryRun` with an API), so its records and ids are shared. */
  readonly dry: DryRun | undefined;
  readonly signal: AbortSignal;
  readonly settings: ReturnType<typeof readHandlerSettings>;
  /** The input's events, for workflows' waits and cancelOn. */
  readonly arrivals: ReturnType<typeof inputArrivals>;
  /** Each handler's `ctx.state`, kept for the whole replay. */
  readonly states: Map<string, VirtualStateStore>;
}

/** One delivery: rejected when invalid, else run by every subscribed handler (failed when any fails). */
async function replayInline(r: InlineReplay, item: ReplayItem): Promise<ReplayOutcome> {
  const envelope = parseEnvelope(item.bytes);
  const base = { key: envelope.key, event: envelope.name };
  const result = validateEvent(envelope);
  if (!result.ok) {
    return {
      ...base,
      kind: 'rejected',
      detail: `${result.reason}: ${result.message}`,
      lines: (result.issues ?? []).map((i) => `  ${i}`),
    };
  }
  const { event } = result;
  const targets = subscribers(r.opts.handlers, event.name);
  if (targets.length === 0) return { ...base, kind: 'accepted', lines: ['  (no handler subscribes to this event)'] };
  const lines: string[] = [];
  let failed = 0;
  // A delivery without received_at counts as received at its created_at: the clock its waits and the other events share.
  const receivedMs = receiptOf(item, event) ?? r.now().getTime();
  const receivedAt = item.receivedAt ?? new Date(receivedMs).toISOString();
  for (const handler of targets) {
    const run = await runHandlerInline(r, handler, { key: envelope.key, event, receivedMs, receivedAt });
    if (!run.ok) failed++;
    lines.push(...run.lines);
  }
  return failed > 0
    ? { ...base, kind: 'failed', detail: `${failed} of ${targets.length} handler${targets.length === 1 ? '' : 's'} failed`, lines }
    : { ...base, kind: 'accepted', lines };
}

/** One handler's run of a delivery: whether it did not fail, and its lines (outcome, then its timeline). */
async function runHandlerInline(
  r: InlineReplay,
  handler: Handler,
  d: { key: string; event: WorkspaceEvent; receivedMs: number; receivedAt: string },
): Promise<{ ok: boolean; lines: string[] }> {
  const { opts } = r;
  const writes: DryWrite[] = [];
  const handlerFetch = r.dry
    ? r.dry.fetch((w) => {
        writes.push(w);
        opts.onDryWrite?.({ ...w, delivery: d.key, handler: handler.id });
      })
    : r.baseFetch;
  const apiFetch = opts.reuseKeys ? handlerFetch : runScopedFetch(handlerFetch, r.salt);
  // The run's API calls and its sleeps, waits and state accesses, in the order they happened.
  const timeline: TimelineItem[] = [];
  const wf = replayWorkflow({
    handler,
    event: d.event,
    key: d.key,
    receivedAt: d.receivedMs,
    arrivals: r.arrivals,
    state: stateOf(r, handler.id),
    onEntry: (entry) => timeline.push({ entry }),
  });
  const { outcome } = await runInline(wf.handler, inlineJob(handler, d.key, d.event, d.receivedAt), {
    api: opts.api && { ...opts.api, fetch: apiFetch },
    steps: r.steps,
    log: opts.log,
    settings: r.settings.get(handler.id) ?? {},
    signal: r.signal,
    onCall: (call) => timeline.push({ call }),
    workspace: opts.workspace,
  });
  const lines = outcomeLines(handler, outcome, wf.record()?.cancelled === true, opts.reuseKeys === true);
  lines.push(...timelineLines(timeline, writes));
  return { ok: outcome.ok, lines };
}

function stateOf(r: InlineReplay, id: string): VirtualStateStore {
  let st = r.states.get(id);
  if (!st) r.states.set(id, (st = new Map<string, StoredState>()));
  return st;
}

/** The line of a run's outcome (and a hint for a reused Idempotency-Key). */
function outcomeLines(handler: Handler, outcome: RunOutcome, cancelled: boolean, reuseKeys: boolean): string[] {
  const ms = Math.round(outcome.ms);
  if (outcome.ok && cancelled)
    return [`  ⊘ ${handler.id} cancelled after ${ms} ms (a cancelOn event of the replay input came while it slept or waited)`];
  if (outcome.ok) return [`  ✓ ${handler.id} completed in ${ms} ms`];
  const lines = [`  ✗ ${handler.id} ${outcome.verdict.kind} after ${ms} ms: ${outcome.verdict.reason}`];
  if (outcome.error instanceof IdempotencyKeyReusedError) lines.push(`    ${reuseKeys ? REUSED_HINT : SAME_RUN_HINT}`);
  return lines;
}

/** A run's API call, or a sleep, wait or state access of its workflow. */
type TimelineItem = { call: CallEvent } | { entry: WorkflowEntry };

/** The run's timeline, each write a dry run answered under its call; writes left unmatched last. */
function timelineLines(timeline: readonly TimelineItem[], writes: DryWrite[]): string[] {
  const lines: string[] = [];
  for (const t of timeline) {
    if ('entry' in t) {
      lines.push(`      ${describeEntry(t.entry)}`);
      continue;
    }
    const c = t.call;
    // A write the dry run answered is the one of the same operation reported first (a call refused before sending has status 0).
    const i = c.status === 0 ? -1 : writes.findIndex((w) => w.op === c.op);
    const w = i < 0 ? undefined : writes.splice(i, 1)[0];
    lines.push(`      ${describeCall(c, w !== undefined)}`);
    if (w) lines.push(`        ${describeDryWrite(w)}`);
  }
  for (const w of writes) lines.push(`        ${describeDryWrite(w)}`);
  return lines;
}
