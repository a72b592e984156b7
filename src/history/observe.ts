import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { createRedactor, type Redactor } from '../pii/redact.js';
import type { Config } from '../config/config.js';
import { parseEnvelope } from '../events/envelope.js';
import { isEventName } from '../events/catalogue.js';
import type { Handler } from '../handler/define.js';
import { keyOf } from '../handler/flow.js';
import type { Logger } from '../log/logger.js';
import { deliveryBytes, type StoredDelivery } from '../queue/delivery.js';
import type { RedisClient } from '../redis/connection.js';
import type { Placement } from '../worker/dispatcher.js';
import type { WorkerHooks } from '../worker/hooks.js';
import type { HandlerJobData } from '../queue/jobs.js';
import { scheduleKey, tickOf, type ScheduleJobView } from '../queue/jobs.js';
import type { HandlerJobDecision, HandlerJobView } from '../worker/processor.js';
import type { StepStore } from '../worker/steps.js';
import { callRecord, cleanText, errorRecord, reasonRecord, type AttemptEntry, type CallRecord, type StepRecord } from './record.js';
import { HistoryWriter, type Receipt } from './store.js';

/** What one handler attempt collects while it runs (kept in AsyncLocalStorage for the run). */
interface RunRecord {
  readonly startedAt: number;
  readonly calls: CallRecord[];
  readonly steps: StepRecord[];
  /** The runner ran the handler (not only the flow checks before it). */
  ran: boolean;
}

type Processor = (job: HandlerJobView, signal?: AbortSignal) => Promise<HandlerJobDecision>;
type ScheduleProcessor = (job: ScheduleJobView, signal?: AbortSignal) => Promise<HandlerJobDecision>;
type DispatchResult = { handlers: string[]; placed: Record<string, Placement>; duplicateChange?: string };

/**
 * The worker's side of the delivery history: the `events` worker's fan-out,
 * and per handler attempt its start, end, outcome, error, steps and API
 * calls, written once when the attempt ends (one pipeline, not awaited).
 * Every method is an identity when history is off, so the worker wires it
 * unconditionally.
 */
export interface WorkerHistory {
  /** The worker's hooks plus the ones that collect API calls and runs. */
  hooks(base: WorkerHooks | undefined): WorkerHooks | undefined;
  /** A step store that notes which steps ran and which were taken from the store. */
  steps(store: StepStore): StepStore;
  /** The processor, recording each attempt. */
  processor(inner: Processor): Processor;
  /**
   * The schedule processor, recording each run as a delivery of its own (key `schedule:<id>:<tick ISO>`,
   * received at the tick) and each attempt as a handler's, through {@link processor}.
   */
  schedules(inner: ScheduleProcessor): ScheduleProcessor;
  /** Records the receipt and the fan-out (or the invalid delivery) of an `events` job (`timestamp`: when the pump queued it). */
  fanOut(job: { readonly data: StoredDelivery; readonly timestamp: number }, handlers: readonly Handler[], run: Promise<DispatchResult>): Promise<DispatchResult>;
}

const OFF: WorkerHistory = {
  hooks: (base) => base,
  steps: (store) => store,
  processor: (inner) => inner,
  schedules: (inner) => inner,
  fanOut: (_d, _h, run) => run,
};

/** A redactor for HISTORY_BODIES: capture's (fakes for names, emails, phones, message text), salted per process so fakes cannot be reversed by guessing. */
function bodyRedactor(config: Config): Redactor | undefined {
  return config.history.bodies ? createRedactor({ salt: randomBytes(16).toString('hex') }) : undefined;
}

/** The history writer of a process, or undefined when HISTORY=off. */
export function historyWriter(config: Config, redis: RedisClient, log: Logger): HistoryWriter | undefined {
  return config.history.enabled ? new HistoryWriter(redis, { prefix: config.queuePrefix, ttlMs: config.history.ttlMs }, log) : undefined;
}

/**
 * The receiver's observer of repeats: each `duplicate` answer counts on its
 * delivery's history, batched (one pipeline every 250 ms at most) and never on
 * the request's path (undefined when HISTORY=off).
 */
export function duplicateHistory(config: Config, redis: RedisClient, log: Logger): { onDuplicate(key: string): void; flush(): void } | undefined {
  const writer = historyWriter(config, redis, log);
  if (!writer) return undefined;
  let pending: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const keys = pending;
    pending = [];
    writer.duplicates(keys);
  };
  return {
    onDuplicate(key) {
      pending.push(key);
      if (pending.length >= 500) flush();
      else timer ??= setTimeout(flush, 250).unref();
    },
    flush,
  };
}

/** The worker's history (see {@link WorkerHistory}); identities when HISTORY=off. */
export function workerHistory(config: Config, redis: RedisClient, log: Logger): WorkerHistory {
  const writer = historyWriter(config, redis, log);
  if (!writer) return OFF;
  const redactor = bodyRedactor(config);
  const current = new AsyncLocalStorage<RunRecord>();

  const hooks = (base: WorkerHooks | undefined): WorkerHooks => ({
    ...base,
    onApiCall: (e) => {
      base?.onApiCall?.(e);
      current.getStore()?.calls.push(callRecord(e));
    },
    onHandler: (r) => {
      base?.onHandler?.(r);
      const run = current.getStore();
      if (run) run.ran = true;
    },
  });

  const steps = (store: StepStore): StepStore => ({
    async get(scope, step) {
      const v = await store.get(scope, step);
      current.getStore()?.steps.push({ name: step, source: v === null ? 'failed' : 'stored' });
      return v;
    },
    async set(scope, step, json) {
      await store.set(scope, step, json);
      const run = current.getStore();
      if (!run) return;
      for (let i = run.steps.length - 1; i >= 0; i--) {
        if (run.steps[i]?.name === step) {
          run.steps[i] = { name: step, source: 'run' };
          return;
        }
      }
    },
  });

  const processor = (inner: Processor): Processor => async (job, signal) => {
    const run: RunRecord = { startedAt: Date.now(), calls: [], steps: [], ran: false };
    let decision: HandlerJobDecision;
    try {
      decision = await current.run(run, () => inner(job, signal));
    } catch (err) {
      record(job, run, { outcome: 'error', error: errorRecord(err) });
      throw err;
    }
    switch (decision.kind) {
      case 'completed':
        if (decision.result.skipped) record(job, run, { outcome: 'skipped', skipped: decision.result.skipped });
        else record(job, run, { outcome: 'completed' });
        break;
      case 'retry':
        record(job, run, { outcome: 'retry', error: errorRecord(decision.error) });
        break;
      case 'dead':
        record(job, run, { outcome: 'dead', error: reasonRecord(decision.reason) });
        break;
      case 'pause':
        record(job, run, { outcome: 'pause', error: { class: decision.code, message: cleanText(decision.reason) } });
        break;
      case 'delay':
        // A job handed back (its handler runs elsewhere) or a burst pushed back ran nothing: not an attempt.
        if (run.ran) record(job, run, { outcome: 'delay', error: { class: 'delay', message: `run again at ${new Date(decision.until).toISOString()}` } });
        break;
    }
    return decision;
  };

  function record(job: HandlerJobView, run: RunRecord, o: Pick<AttemptEntry, 'outcome' | 'skipped' | 'error'>): void {
    const entry: AttemptEntry = {
      kind: 'attempt', at: Date.now(), startedAt: run.startedAt, handler: job.data.handlerId, attempt: job.attemptsMade + 1,
      ...(job.id.startsWith('d/') ? {} : { job: job.id }),
      outcome: o.outcome, ...(o.skipped ? { skipped: o.skipped } : {}), ...(o.error ? { error: o.error } : {}),
      steps: run.steps, calls: run.calls,
    };
    writer?.attempt(job.data.key, entry, job.id);
  }

  const schedules = (inner: ScheduleProcessor): ScheduleProcessor => async (job, signal) => {
    const tick = tickOf(job);
    const key = scheduleKey(job.data.scheduleId, tick);
    writer.scheduled(key, tick);
    // The run seen as a handler job of the schedule, so its attempts are recorded as a handler's are.
    const data: HandlerJobData = { key, handlerId: job.data.scheduleId, receivedAt: new Date(tick).toISOString(), event: { id: null, name: 'schedule' as HandlerJobData['event']['name'], createdAt: null, data: null } };
    const view: HandlerJobView = { id: job.id, data, attempts: job.attempts ?? 1, timestamp: job.timestamp, attemptsMade: job.attemptsMade };
    return processor(() => {
      // A schedule's run always runs it (no flow checks before it), so a 429's delay is an attempt.
      const run = current.getStore();
      if (run) run.ran = true;
      return inner(job, signal);
    })(view, signal);
  };

  const fanOut: WorkerHistory['fanOut'] = async (job, handlers, run) => {
    const d = job.data;
    const receipt: Receipt = {
      receivedAt: d.receivedAt, queuedAt: job.timestamp, secretIndex: d.secretIndex,
      bytes: d.body !== undefined ? Buffer.byteLength(d.body) : Math.floor(((d.bodyBase64?.length ?? 0) * 3) / 4),
      source: d.source ?? 'webhook',
    };
    let result: DispatchResult;
    try {
      result = await run;
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      if (code === 'invalid_delivery') writer.invalid(d.key, receipt, d.name, cleanText(String((err as Error).message)), redactedBody(d));
      throw err;
    }
    try {
      const env = parseEnvelope(deliveryBytes(d));
      const name = env.name ?? d.name ?? '?';
      const event = isEventName(name) ? { name, data: env.data } : null;
      const byId = new Map(handlers.map((h) => [h.id, h]));
      writer.fannedOut(d.key, receipt, {
        event: name,
        conversation: event ? idOf(keyOf('conversation', event)) : null,
        contact: event ? idOf(keyOf('contact', event)) : null,
        handlers: result.handlers.map((id) => ({ id, placement: result.placed[id] ?? 'queued', priority: byId.get(id)?.flow.priority ?? 'normal' })),
        ...(result.duplicateChange !== undefined ? { duplicateChange: result.duplicateChange } : {}),
        ...(redactor ? { body: redactedBody(d) } : {}),
      });
    } catch (err) {
      log.debug({ err: String(err) }, 'history: fan-out not recorded');
    }
    return result;
  };

  function redactedBody(d: StoredDelivery): string | undefined {
    return redactor ? redactor.body(deliveryBytes(d)).toString('utf8') : undefined;
  }

  return { hooks, steps, processor, schedules, fanOut };
}

/** `conversation:42` → `42`. */
function idOf(k: string | null): string | null {
  return k === null ? null : k.slice(k.indexOf(':') + 1);
}
