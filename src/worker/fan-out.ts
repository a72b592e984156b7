import type { Job } from 'bullmq';
import { parseEnvelope } from '../events/index.js';
import type { HandlerSet } from '../handler/index.js';
import type { LifecycleBus, DeliveryFacts, PlacedRun } from '../lifecycle/index.js';
import type { Logger } from '../log/index.js';
import { deliveryBytes, type StoredDelivery, type FlowControl } from '../queue/index.js';
import { dispatch, type FanOutPorts } from './dispatcher.js';

/**
 * The `events` worker's processor: one delivery's fan-out (./dispatcher.ts,
 * inside flow control's pending fan-out bookkeeping) and what the lifecycle
 * stream hears of it: `received` (the scope fan-out runs in) and `fanned-out`
 * (the envelope parsed once here, for dispatch and the observers alike).
 */

export interface FanOutDeps {
  /** The handler modules now (fan-out creates a job for every subscriber, whoever runs it). */
  readonly set: Pick<HandlerSet, 'current'>;
  /** Takes a delivery off the pending fan-out set once fanned out or dead-lettered (src/queue/flow.ts). */
  readonly flow: Pick<FlowControl, 'fanningOut'>;
  /** Where dispatch places runs, claims changes and answers waits (built by the wiring, src/runtime/worker.ts). */
  readonly ports: FanOutPorts;
  readonly lifecycle: LifecycleBus;
  readonly log: Logger;
}

type FanOutResult = Awaited<ReturnType<typeof dispatch>>;

/** The processor of the `events` queue: each delivery fanned out within its `received` scope (when anyone observes). */
export function eventsProcessor(deps: FanOutDeps): (job: Job<StoredDelivery>) => Promise<FanOutResult> {
  const { lifecycle } = deps;
  return async (job: Job<StoredDelivery>) => {
    if (!lifecycle.active) return fanOut(deps, job, undefined);
    const delivery = deliveryFacts(job);
    return lifecycle.within({ type: 'received', delivery }, (traceparent) => fanOut(deps, job, delivery, traceparent));
  };
}

/** Fan-out of one delivery, its body parsed once here (for dispatch and the lifecycle's observers). */
async function fanOut(
  deps: FanOutDeps,
  job: Job<StoredDelivery>,
  delivery: DeliveryFacts | undefined,
  traceparent?: string,
): Promise<FanOutResult> {
  const { set, flow, ports: fanOutPorts, lifecycle, log } = deps;
  const all = set.current().all;
  // The text as stored is parsed as is (no round trip through the bytes).
  const envelope = parseEnvelope(delivery?.raw ?? deliveryBytes(job.data), job.data.body);
  let placed;
  try {
    // Off the pending fan-out set once fanned out or dead-lettered as invalid (retries exhausted: the 'failed' listener).
    // The delivery carries its fan-out scope's trace context (tracing's fan-out span; none without) to the runs dispatch adds.
    const carrying = job.data.traceparent === traceparent ? job.data : { ...job.data, traceparent };
    placed = await flow.fanningOut(job.data.key, () => dispatch(carrying, all, fanOutPorts, envelope));
  } catch (err) {
    if (delivery) lifecycle.emit({ type: 'fanned-out', delivery, envelope, ok: false, error: err });
    throw err;
  }
  if (delivery) {
    const result = placed;
    const runs = result.handlers.map((id): PlacedRun => ({
      id,
      placement: result.placed[id] ?? 'queued',
      priority: all.find((h) => h.id === id)?.flow.priority ?? 'normal',
    }));
    lifecycle.emit({
      type: 'fanned-out',
      delivery,
      envelope,
      ok: true,
      runs,
      ...(result.duplicateChange !== undefined ? { duplicateChange: result.duplicateChange } : {}),
    });
  }
  if (placed.duplicateChange)
    log.info(
      { delivery: job.data.key, change: placed.duplicateChange },
      'duplicate change: another delivery of it was dispatched; no handler runs',
    );
  return placed;
}

/** What the lifecycle says of an `events` job's delivery (its raw body decoded once). */
function deliveryFacts(job: Job<StoredDelivery>): DeliveryFacts {
  const d = job.data;
  return {
    key: d.key,
    name: d.name,
    receivedAt: d.receivedAt,
    queuedAt: job.timestamp,
    secretIndex: d.secretIndex,
    bytes: d.body !== undefined ? Buffer.byteLength(d.body) : Math.floor(((d.bodyBase64?.length ?? 0) * 3) / 4),
    source: d.source ?? 'webhook',
    traceparent: d.traceparent,
    raw: deliveryBytes(d),
    job: { queue: job.queueName, id: job.id, attempt: job.attemptsMade + 1 },
  };
}
