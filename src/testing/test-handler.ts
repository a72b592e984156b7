import {
  DERIVED_EVENT_NAMES,
  type EventName,
  type WorkspaceEvent,
  changeKey,
  jobIdFor,
  reconcileDeliveryKey,
  parseEnvelope,
} from '../events/index.js';
import { isHandler, type Handler, keyOf, NO_WORKFLOW } from '../handler/index.js';
import { inlineJob, runInline } from '../replay/index.js';
import { MemoryStepStore, jsonCopy, type VirtualStateStore, virtualWorkflow, withVirtualWorkflow } from '../worker/index.js';
import { DeliveryError, toEvent, type Delivery } from './delivery.js';
import { deliveryOf, type HandlerInput } from './input.js';
import { memoryLogger } from './memory-log.js';
import { testSettings } from './given-settings.js';
import { previousSteps, recordingSteps } from './steps.js';
import { runTarget, testCalls } from './target.js';
import type { TestHandlerOptions, TestHandlerResult, TestSource } from './types.js';
import { arrivals } from './workflow.js';
import { workspaceOption } from './workspace-option.js';

const SOURCES: readonly TestSource[] = ['webhook', 'reconcile', 'poll'];

/**
 * Runs one handler on one event exactly as the worker does (its runner,
 * context, step store and Idempotency-Keys, the handler's timeout) against an
 * in-process sandbox that opens no port, or the API at `options.api`.
 *
 * `input`: an event (createEvent, toEvent), a Delivery (loadFixture,
 * readDelivery) or an event name (its shipped fixture). Throws a
 * DeliveryError for an input the worker would not run the handler on, a
 * HandlerSettingsError for bad settings, a TypeError for bad options.
 */
export async function testHandler<N extends EventName, S extends object>(
  handler: Handler<N, S>,
  input: HandlerInput<NoInfer<N>>,
  options: TestHandlerOptions<S> = {},
): Promise<TestHandlerResult<N>> {
  const attempt = checkOptions(handler, options);
  const workspace = workspaceOption('testHandler', options.workspace);
  const delivery: Delivery = await deliveryOf(input);
  const event = subscribedEvent(handler, delivery);
  const settings = testSettings(handler, options.settings, options.env ?? {});
  const fixed = options.now;
  const now = fixed === undefined ? () => new Date() : typeof fixed === 'function' ? fixed : () => fixed;
  const receivedAt = delivery.receivedAt ?? now().toISOString();
  const start = Date.parse(receivedAt);
  const wf = testWorkflow(handler, event, options, start);
  const advanced = () => {
    const r = wf.record();
    return r ? r.clock - start : 0;
  };
  const { api, sandbox } = runTarget(options, () => (fixed === undefined ? Date.now() : now().getTime()) + advanced());
  const { log, lines } = memoryLogger(options.logLevel ?? 'info');
  const { source, key } = runDelivery(event, delivery, options.source);
  const rerun = fromStepOf(handler.id, key, options);
  const given = options.steps ?? new MemoryStepStore();
  const { store, steps } = recordingSteps(rerun ? previousSteps(given, rerun.of, rerun.fromStep, options.previous ?? {}) : given);
  const job = { ...inlineJob(handler, key, event, receivedAt), ...(rerun ? { rerun } : {}) };
  const { outcome, calls } = await runInline(wf.handler, source === 'webhook' ? job : { ...job, source }, {
    // A retryable failure on the handler's last allowed attempt is dead-lettered by the worker, so it is here too (the runner decides).
    api,
    steps: store,
    log,
    settings,
    signal: options.signal ?? new AbortController().signal,
    attempt,
    attempts: handler.retry.attempts,
    workspace,
  });
  const record = wf.record();
  if (rerun && outcome.ok && !steps.some((s) => s.name === rerun.fromStep)) {
    const ran = steps.length ? steps.map((s) => `"${s.name}"`).join(', ') : 'none';
    throw new TypeError(`testHandler: the run never reached step "${rerun.fromStep}" (fromStep); the steps it ran: ${ran}`);
  }
  return {
    outcome: outcome.ok ? (record?.cancelled ? 'cancelled' : 'completed') : outcome.verdict.kind,
    error: outcome.ok ? undefined : outcome.error,
    reason: outcome.ok ? undefined : outcome.verdict.reason,
    calls: testCalls(calls),
    steps,
    logs: lines,
    event: event as WorkspaceEvent<N>,
    delivery: { key, receivedAt, attempt, source },
    sandbox,
    waits: record?.waits ?? [],
    state: record?.state ?? options.state ?? null,
  };
}

/** Refuses a value that is not a handler and bad options (TypeError); returns the attempt. */
function checkOptions<S extends object>(handler: unknown, options: TestHandlerOptions<S>): number {
  if (!isHandler(handler)) throw new TypeError('testHandler: expected a handler made by defineHandler as the first argument');
  const attempt = options.attempt ?? 1;
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new TypeError(`testHandler: attempt must be a positive integer, got ${String(attempt)}`);
  if (options.api && options.sandbox) throw new TypeError('testHandler: give either api or sandbox, not both');
  if (options.source !== undefined && !SOURCES.includes(options.source)) {
    throw new TypeError(`testHandler: source must be one of ${SOURCES.join(', ')}, got ${JSON.stringify(options.source)}`);
  }
  return attempt;
}

/** `fromStep` and `previous`: the run as a re-run from that step (the original's results are `previous`); null without. */
function fromStepOf<S extends object>(
  handlerId: string,
  key: string,
  options: TestHandlerOptions<S>,
): { id: string; of: string; fromStep: string } | null {
  const { fromStep, previous } = options;
  if (fromStep === undefined) {
    if (previous !== undefined)
      throw new TypeError('testHandler: previous is given without fromStep; it is what the steps before fromStep returned');
    return null;
  }
  if (typeof fromStep !== 'string' || fromStep === '') {
    throw new TypeError(`testHandler: fromStep must be a step name (a non-empty string), got ${JSON.stringify(fromStep)}`);
  }
  if (previous !== undefined && (typeof previous !== 'object' || previous === null || Array.isArray(previous))) {
    throw new TypeError('testHandler: previous must be an object of step name → the result that step returned, e.g. { lookup: 38 }');
  }
  if (previous && Object.hasOwn(previous, fromStep)) {
    throw new TypeError(
      `testHandler: previous gives a result for "${fromStep}", the step the run starts from; it runs fresh, so leave it out`,
    );
  }
  return { id: 'test', of: jobIdFor(key, handlerId), fromStep };
}

/** The delivery's event, refused (DeliveryError) when the handler does not subscribe to it. */
function subscribedEvent(handler: Handler, delivery: Delivery): WorkspaceEvent {
  const event = toEvent(delivery);
  if (!(handler.on as readonly string[]).includes(event.name)) {
    throw new DeliveryError(
      `${delivery.source}: is a "${event.name}" event; handler "${handler.id}" subscribes to ${handler.on.join(', ')}`,
    );
  }
  return event;
}

/**
 * The handler with a virtual workflow: its sleeps and waits move a virtual clock (a fresh
 * sandbox's clock moves with it), its waits see `options.events`, and `options.state` is the
 * value of the run's own state key when the run starts.
 */
function testWorkflow<S extends object>(handler: Handler, event: WorkspaceEvent, options: TestHandlerOptions<S>, start: number) {
  const policy = handler.workflow ?? NO_WORKFLOW;
  if (options.state !== undefined && policy.state === null) {
    throw new TypeError(
      `testHandler: state is given, but handler "${handler.id}" has no ctx.state (neither "orderBy" nor "state: { key }")`,
    );
  }
  const events = arrivals(options.events, start, 'testHandler');
  const state: VirtualStateStore = new Map();
  const stateKey = policy.state === null ? null : keyOf(policy.state.key, event);
  if (options.state !== undefined && stateKey !== null) state.set(stateKey, { value: jsonCopy(options.state), writtenAt: start });
  return withVirtualWorkflow(handler, (onCancel) =>
    virtualWorkflow({ handlerId: handler.id, policy, own: { event, receivedAt: start }, events, state, onCancel }),
  );
}

/**
 * The run's source (default `poll` for a derived event, else `webhook`) and delivery key.
 * A reconciled run's key is `rc:<change key>`, so its Idempotency-Keys and steps are the
 * ones reconcile's run would have.
 */
function runDelivery(event: WorkspaceEvent, delivery: Delivery, given: TestSource | undefined): { source: TestSource; key: string } {
  const derived = (DERIVED_EVENT_NAMES as readonly string[]).includes(event.name);
  const source = given ?? (derived ? 'poll' : 'webhook');
  if (source === 'poll' && !derived)
    throw new TypeError(`testHandler: source "poll" is for the derived events (${DERIVED_EVENT_NAMES.join(', ')}), not ${event.name}`);
  const change = source === 'reconcile' ? changeKey(event.name, event.data) : null;
  if (source === 'reconcile' && change === null) {
    const derivedNote = derived ? ' (a derived event: the poller makes it)' : '';
    throw new TypeError(
      `testHandler: reconcile never synthesizes ${event.name}${derivedNote}, or this one lacks the id or time its change key needs`,
    );
  }
  return { source, key: change === null ? parseEnvelope(delivery.bytes).key : reconcileDeliveryKey(change) };
}
