import { UnrecoverableError as BullmqUnrecoverableError } from 'bullmq';
import { jobIdFor, parseEnvelope, type Envelope, validateEvent, type WorkspaceEvent, changeKey } from '../events/index.js';
import { type Handler, keyOf } from '../handler/index.js';
import {
  type ChangeClaimant,
  type FlowControl,
  orderMember,
  type QueuedJob,
  deliveryBytes,
  type StoredDelivery,
  handlerJobOptions,
  type HandlerJobData,
} from '../queue/index.js';
import type { EventCheck } from './waits.js';

/** Why an `events` job was dead-lettered without fan-out (shown by `dlq list`). */
export class InvalidDeliveryError extends BullmqUnrecoverableError {
  readonly code = 'invalid_delivery';
  constructor(
    readonly reason: string,
    message: string,
    readonly issues: readonly string[] = [],
  ) {
    super(`${reason}: ${message}${issues.length ? ` [${issues.join('; ')}]` : ''}`);
    this.name = 'InvalidDeliveryError';
  }
}

/**
 * Who claims a change: a webhook at its event's time; a delivery Switchyard
 * made (reconcile, poll) at its receipt, when it saw the record in that state.
 */
function claimant(delivery: StoredDelivery, createdAt: string | null): ChangeClaimant {
  const source = delivery.source ?? 'webhook';
  const at = source === 'webhook' ? (createdAt ? Date.parse(createdAt) : Number.NaN) : Date.parse(delivery.receivedAt);
  const received = Date.parse(delivery.receivedAt);
  return {
    deliveryKey: delivery.key,
    source,
    atMs: Number.isFinite(at) ? at : null,
    receivedAtMs: Number.isFinite(received) ? received : null,
  };
}

/** The handlers subscribed to an event name. */
export function subscribers(handlers: readonly Handler[], name: string): Handler[] {
  return handlers.filter((h) => (h.on as readonly string[]).includes(name));
}

/** Where fan-out puts runs: flow control (src/queue/flow.ts) adds them to the handler queues, the order lines and the debounce bursts. */
export interface FanOutPorts {
  readonly flow: Pick<FlowControl, 'addJobs' | 'enqueue' | 'fold'>;
  /**
   * What a valid event passes before its runs are placed (src/worker/waits.ts `eventChecks`), in one script call:
   * the claim of its change key (`change`: null when it has none; src/queue/change.ts) and the durable waits it
   * answers, whether or not any handler subscribes to it. `claimed` false: another delivery of the same change
   * was dispatched, so nothing runs and no wait is answered. Absent: no change-level dedupe, no workflows.
   */
  readonly check?: (
    event: WorkspaceEvent,
    delivery: StoredDelivery,
    change: { key: string; claimant: ChangeClaimant } | null,
  ) => Promise<EventCheck>;
}

/** How fan-out placed each handler's run. */
export type Placement = 'queued' | 'ordered' | 'waiting' | 'debounced' | 'folded' | 'repeat';

/**
 * Processes an `events` job: validates the stored delivery against the
 * catalogue and places one run per subscribed handler, with job id
 * (delivery key, handler id), its handler's `retry` attempts and back-off, in
 * the queue of its handler's priority, so each handler retries and
 * dead-letters on its own and a repeated fan-out adds nothing. A handler with
 * `orderBy` has its run put in its key's line (its job is added when it is the
 * head); one with `debounce` has it folded into its key's burst. An invalid
 * delivery is dead-lettered with its reason and issues; its raw body stays in
 * the job.
 */
export async function dispatch(
  delivery: StoredDelivery,
  handlers: readonly Handler[],
  ports: FanOutPorts,
  /** The delivery's body parsed (the worker parses it once, for fan-out and its observers). */
  envelope: Envelope = parseEnvelope(deliveryBytes(delivery)),
): Promise<{ handlers: string[]; placed: Record<string, Placement>; duplicateChange?: string }> {
  const result = validateEvent(envelope);
  if (!result.ok) throw new InvalidDeliveryError(result.reason, result.message, result.issues ?? []);
  const { event } = result;
  // Another delivery of the same change (a late real one after reconcile, or the reverse) ran already: nothing to run.
  // Runs sleeping or waiting on this event (or cancelled by it) are answered in the same call.
  const change = ports.check ? changeKey(event.name, event.data) : null;
  const checked = await ports.check?.(
    event,
    delivery,
    change === null ? null : { key: change, claimant: claimant(delivery, event.createdAt) },
  );
  if (checked && !checked.claimed) return { handlers: [], placed: {}, duplicateChange: change ?? '' };
  // The answered runs' wake-ups, awaited below; marked handled now, so a failed placement meanwhile leaves no unhandled rejection.
  const answering = checked?.waking;
  answering?.catch(() => undefined);
  const targets = subscribers(handlers, event.name);
  const placed: Record<string, Placement> = {};
  if (targets.length === 0) {
    await answering;
    return { handlers: [], placed };
  }
  const receivedMs = Date.parse(delivery.receivedAt);
  const createdMs = event.createdAt ? Date.parse(event.createdAt) : Number.NaN;
  // The event's place in time: its creation, else its receipt.
  const at = Number.isFinite(createdMs) ? createdMs : receivedMs;
  const placing: Placing = {
    delivery,
    event,
    flow: ports.flow,
    at,
    receivedMs,
    // A reconciled change is late already: catch-up work, it never takes a live event's slot.
    caughtUp: delivery.source === 'reconcile',
    now: [],
    placed,
  };
  // Runs of debounced and ordered handlers wait for their burst or line; the others are placed at once.
  const flowPlaced: Promise<void>[] = [];
  for (const h of targets) {
    try {
      const placement = placeRun(h, placing);
      if (placement) flowPlaced.push(placement);
    } catch (err) {
      // A handler's key function threw: the others' placements still start, and fan-out fails with the first error.
      flowPlaced.push(Promise.reject(err));
    }
  }
  if (flowPlaced.length > 0) await Promise.all(flowPlaced);
  const { now } = placing;
  if (now.length > 0) await ports.flow.addJobs(now);
  await answering;
  return { handlers: targets.map((h) => h.id), placed };
}

/** One delivery's fan-out as its runs are placed: the runs to add now, and how each handler's run was placed. */
interface Placing {
  readonly delivery: StoredDelivery;
  readonly event: WorkspaceEvent;
  readonly flow: FanOutPorts['flow'];
  /** The event's place in time: its creation, else its receipt (ms). */
  readonly at: number;
  readonly receivedMs: number;
  readonly caughtUp: boolean;
  readonly now: QueuedJob[];
  readonly placed: Record<string, Placement>;
}

/**
 * Places one handler's run: a plain run's job goes with those added now (undefined: placed); a debounced one
 * is folded into its key's burst, an ordered one put in its key's line (the promise of that placement).
 */
function placeRun(h: Handler, c: Placing): Promise<void> | undefined {
  const { delivery, event } = c;
  // The trace context the delivery carries into fan-out (its fan-out scope's, tracing on): each run continues it.
  const traceparent = delivery.traceparent;
  const data: HandlerJobData = {
    key: delivery.key,
    handlerId: h.id,
    receivedAt: delivery.receivedAt,
    event: { id: event.id, name: event.name, createdAt: event.createdAt, data: event.data },
    ...(traceparent === undefined ? {} : { traceparent }),
    ...(delivery.source ? { source: delivery.source } : {}),
  };
  const jobId = jobIdFor(delivery.key, h.id);
  const { debounce, orderBy } = h.flow;
  const debounceKey = debounce ? keyOf(debounce.key, event) : null;
  if (debounce && debounceKey !== null) {
    return (async () => {
      const r = await c.flow.fold(data, jobId, debounceKey, c.at, debounce.waitMs, debounce.maxWaitMs);
      if (r.kind === 'open') c.now.push(queuedJob(h, c.caughtUp, { ...data, debounce: { key: debounceKey } }, r.jobId, r.delayMs));
      c.placed[h.id] = r.kind === 'open' ? 'debounced' : r.kind;
    })();
  }
  const orderKey = orderBy ? keyOf(orderBy, event) : null;
  if (orderKey !== null) {
    return (async () => {
      const ordered = { ...data, order: { key: orderKey, member: orderMember(c.receivedMs, jobId), at: c.at } };
      const r = await c.flow.enqueue(queuedJob(h, c.caughtUp, ordered, jobId), ordered.order);
      if (r === 'add') c.now.push(queuedJob(h, c.caughtUp, ordered, jobId));
      c.placed[h.id] = r === 'add' ? 'ordered' : r === 'wait' ? 'waiting' : 'repeat';
    })();
  }
  c.now.push(queuedJob(h, c.caughtUp, data, jobId));
  c.placed[h.id] = 'queued';
  return undefined;
}

/** A run's job in the queue of its handler's priority (a reconciled change's in the low one), with its handler's retries. */
function queuedJob(h: Handler, caughtUp: boolean, data: HandlerJobData, jobId: string, delay = 0): QueuedJob {
  return {
    priority: caughtUp ? 'low' : h.flow.priority,
    name: h.id,
    data,
    opts: { ...handlerJobOptions(h.retry), jobId, ...(delay > 0 ? { delay } : {}) },
  };
}
