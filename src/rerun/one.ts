import { Queue } from 'bullmq';
import { jobIdFor } from '../events/index.js';
import { parseJobId, readTrace, type AttemptEntry } from '../history/index.js';
import { HANDLER_QUEUE_BY_PRIORITY, handlerJobOptions, rerunJobId, type HandlerJobData } from '../queue/index.js';
import { eventOfBody, rerunBodies } from './bodies.js';
import type { RerunDeps } from './deps.js';
import { RERUN_JOB_PRIORITY } from './feed.js';
import { newBatchId } from './keys.js';
import { RerunSelectionError, selectedHandler } from './selection.js';

/** One delivery run again by one handler, from a step, with its event edited (`rerun <delivery> --from-step`). */
export interface OneRerun {
  /** The delivery's key, or a job id naming it (`d/<key>`, `d/<key>/<handler>`). */
  readonly delivery: string;
  readonly handler: string;
  /** The steps before it return what they returned in the original run; it and the rest run fresh. */
  readonly fromStep?: string;
  /** Edits the event's envelope before it is validated (`--set`, as `send --set` does). */
  readonly edit?: (envelope: Record<string, unknown>) => void;
}

/** The re-run added: its job (in `handlers-low`), its id and the original run's. */
export interface StartedOne {
  readonly jobId: string;
  readonly rerunId: string;
  readonly of: string;
  readonly key: string;
  readonly event: HandlerJobData['event'];
}

/**
 * Adds a re-run of one delivery by one handler: the delivery's history must show the handler's run (and,
 * with `fromStep`, a step of that name in it), its body must be kept, and the event (edited) must be
 * valid and handled by the handler. Throws RerunSelectionError saying which of these failed.
 */
export async function rerunDelivery(deps: RerunDeps, one: OneRerun): Promise<StartedOne> {
  const handler = selectedHandler(deps.handlers, { handler: one.handler });
  const key = parseJobId(one.delivery)?.key ?? one.delivery;
  const trace = await readTrace(deps.redis, deps.prefix, key);
  if (!trace) throw new RerunSelectionError(`no history of delivery "${key}" (\`switchyard deliveries\` lists the ones kept)`);
  if (!(handler.id in trace.handlers)) {
    const ran = Object.keys(trace.handlers);
    throw new RerunSelectionError(
      `handler "${handler.id}" did not run on delivery "${key}"` + (ran.length ? ` (handlers that did: ${ran.join(', ')})` : ''),
    );
  }
  if (one.fromStep !== undefined) checkStep(trace.entries, handler.id, key, one.fromStep);
  const bodies = await (deps.bodies ?? rerunBodies(deps.redis, deps.prefix))([key]);
  const body = bodies.get(key);
  if (!body)
    throw new RerunSelectionError(`the body of delivery "${key}" is not kept (received before bodies were kept, or kept no longer)`);
  const r = eventOfBody(body, one.edit);
  if (!r.ok) throw new RerunSelectionError(`the event would be ${r.reason}`);
  if (!(handler.on as readonly string[]).includes(r.event.name)) {
    throw new RerunSelectionError(`handler "${handler.id}" does not handle ${r.event.name}; it is subscribed to ${handler.on.join(', ')}`);
  }
  const rerunId = newBatchId((deps.now ?? Date.now)()).replace(/^rr-/, 'r1-');
  const of = jobIdFor(key, handler.id);
  const event = { id: r.event.id, name: r.event.name, createdAt: r.event.createdAt, data: r.event.data };
  const data: HandlerJobData = {
    key,
    handlerId: handler.id,
    receivedAt: trace.receivedAt ?? new Date().toISOString(),
    event,
    rerun: { id: rerunId, of, ...(one.fromStep !== undefined ? { fromStep: one.fromStep } : {}) },
  };
  const jobId = rerunJobId(key, handler.id, rerunId);
  const queue = new Queue(HANDLER_QUEUE_BY_PRIORITY.low, { connection: deps.redis, prefix: deps.prefix });
  try {
    await queue.add(handler.id, data, { ...handlerJobOptions(handler.retry), jobId, priority: RERUN_JOB_PRIORITY });
  } finally {
    await queue.close();
  }
  return { jobId, rerunId, of, key, event };
}

/** The original run must have a step of that name (its results are what the steps before return). */
function checkStep(entries: readonly { kind: string }[], handler: string, key: string, step: string): void {
  const names = new Set<string>();
  for (const e of entries)
    if (e.kind === 'attempt' && (e as AttemptEntry).handler === handler) for (const s of (e as AttemptEntry).steps) names.add(s.name);
  if (names.has(step)) return;
  throw new RerunSelectionError(
    `--from-step "${step}": the run of "${handler}" on "${key}" has no step of that name` +
      (names.size ? ` (its steps: ${[...names].join(', ')})` : ' (it recorded no steps)'),
  );
}
