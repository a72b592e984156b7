import { randomBytes } from 'node:crypto';
import { createRedactor, type Redactor } from '../pii/index.js';
import type { Config } from '../config/index.js';
import { isEventName } from '../events/index.js';
import { keyOf } from '../handler/index.js';
import type {
  LifecycleSubscriber,
  AttemptDecision,
  AttemptEndedEvent,
  AttemptRef,
  DeliveryFacts,
  FannedOutEvent,
  StepEvent,
} from '../lifecycle/index.js';
import type { Logger } from '../log/index.js';
import type { RedisClient } from '../redis/index.js';
import {
  callRecord,
  cleanText,
  errorRecord,
  reasonRecord,
  type AttemptEntry,
  type CallRecord,
  type StepRecord,
  type WaitRecord,
} from './record.js';
import { HistoryWriter, type Receipt } from './writer.js';

/** What one attempt collected while it ran: its API calls and steps (made when the first one comes). */
interface RunRecord {
  readonly calls: CallRecord[];
  readonly steps: StepRecord[];
  readonly waits: WaitRecord[];
}

/**
 * A redactor for HISTORY_BODIES: capture's (fakes for names, emails, phones, message text), salted per process so fakes
 * cannot be reversed by guessing.
 */
function bodyRedactor(config: Config): Redactor | undefined {
  return config.history.bodies ? createRedactor({ salt: randomBytes(16).toString('hex') }) : undefined;
}

/** The history writer of a process, or undefined when HISTORY=off. */
export function historyWriter(config: Config, redis: RedisClient, log: Logger): HistoryWriter | undefined {
  const { enabled, ttlMs, keepBodiesMs } = config.history;
  return enabled ? new HistoryWriter(redis, { prefix: config.queuePrefix, ttlMs, keepBodiesMs }, log) : undefined;
}

/**
 * The receiver's observer of repeats: each `duplicate` answer counts on its
 * delivery's history, batched (one pipeline every 250 ms at most) and never on
 * the request's path (undefined when HISTORY=off).
 */
export function duplicateHistory(
  config: Config,
  redis: RedisClient,
  log: Logger,
): { onDuplicate(key: string): void; flush(): void } | undefined {
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
    writer.flush();
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

/** The worker's history: its lifecycle subscriber, and `flush` to send the writes still batched (before the connection closes). */
export interface HistoryObserver {
  readonly subscriber: LifecycleSubscriber;
  flush(): void;
}

/** What the worker's history keeps between lifecycle events. */
interface HistoryState {
  readonly writer: HistoryWriter;
  /** HISTORY_BODIES: the redactor of the bodies kept (undefined: no body kept). */
  readonly redactor: Redactor | undefined;
  /** The calls and steps of attempts still running (only those that made any). */
  readonly runs: WeakMap<AttemptRef, RunRecord>;
  /** When the `events` worker took each delivery: its fan-out's time in the history (the runs it places may start before it ends). */
  readonly takenAt: WeakMap<DeliveryFacts, number>;
  readonly log: Logger;
}

/**
 * The worker's side of the delivery history, as a lifecycle subscriber
 * (undefined when HISTORY=off): the `events` worker's receipt and fan-out (or
 * the invalid delivery), and per handler or schedule attempt its start, end,
 * outcome, error, steps and API calls, written once when the attempt ends (the
 * writes within 10 ms in one pipeline, one delivery's merged, never awaited). A schedule's
 * run is recorded as a delivery of its own (key `schedule:<id>:<tick ISO>`,
 * received at the tick) with its attempts as a handler's.
 */
export function historyObserver(config: Config, redis: RedisClient, log: Logger): HistoryObserver | undefined {
  const writer = historyWriter(config, redis, log);
  if (!writer) {
    if (config.history.keepBodiesSet && config.history.keepBodiesMs > 0)
      log.warn('KEEP_BODIES is set but HISTORY=off: no body is kept (bodies are kept with the history); set HISTORY=on to keep them');
    return undefined;
  }
  const h: HistoryState = { writer, redactor: bodyRedactor(config), runs: new WeakMap(), takenAt: new WeakMap(), log };
  const subscriber: LifecycleSubscriber = {
    received: ({ delivery }) => {
      h.takenAt.set(delivery, Date.now());
    },
    'attempt-started': ({ attempt }) => {
      if (attempt.kind === 'schedule' && attempt.tick !== undefined) writer.scheduled(attempt.key, attempt.tick);
    },
    'api-call': ({ attempt, call }) => {
      if (attempt) runOf(h, attempt).calls.push(callRecord(call));
    },
    step: (e) => stepSeen(h, e),
    wait: (e) => {
      const { type: _type, attempt, ...w } = e;
      runOf(h, attempt).waits.push(w);
    },
    'attempt-ended': (e) => {
      if (e.ok) ended(h, e, e.decision);
      else record(h, e, { outcome: 'error', error: errorRecord(e.error) });
    },
    'fanned-out': (e) => fannedOut(h, e),
  };
  return { subscriber, flush: () => writer.flush() };
}

/** The record of an attempt still running (made when it first reports a call, step or wait). */
function runOf(h: HistoryState, ref: AttemptRef): RunRecord {
  let run = h.runs.get(ref);
  if (!run) h.runs.set(ref, (run = { calls: [], steps: [], waits: [] }));
  return run;
}

/** A step as it goes: one not stored yet counts as failed until it is done. */
function stepSeen(h: HistoryState, { attempt, name, state }: StepEvent): void {
  const run = runOf(h, attempt);
  if (state !== 'done') {
    run.steps.push({ name, source: state === 'stored' ? 'stored' : 'failed' });
    return;
  }
  for (let i = run.steps.length - 1; i >= 0; i--) {
    if (run.steps[i]?.name === name) {
      run.steps[i] = { name, source: 'run' };
      return;
    }
  }
}

/** Writes an attempt's entry: its outcome with what it collected. */
function record(h: HistoryState, e: AttemptEndedEvent, o: Pick<AttemptEntry, 'outcome' | 'skipped' | 'error'>): void {
  const ref = e.attempt;
  const run = h.runs.get(ref);
  const entry: AttemptEntry = {
    kind: 'attempt',
    at: e.endedAt,
    startedAt: ref.startedAt,
    handler: ref.handler,
    attempt: ref.number,
    ...(ref.jobId.startsWith('d/') ? {} : { job: ref.jobId }),
    outcome: o.outcome,
    ...(o.skipped ? { skipped: o.skipped } : {}),
    ...(o.error ? { error: o.error } : {}),
    steps: run?.steps ?? [],
    calls: run?.calls ?? [],
    ...(run && run.waits.length > 0 ? { waits: run.waits } : {}),
  };
  if (ref.rerun) h.writer.rerunAttempt(ref.key, ref.event, ref.rerun, entry, ref.jobId);
  else h.writer.attempt(ref.key, entry, ref.jobId);
}

/** An attempt that ended with a decision: its outcome as the history names it. */
function ended(h: HistoryState, e: AttemptEndedEvent, decision: AttemptDecision): void {
  switch (decision.kind) {
    case 'completed':
      if (decision.result.skipped) record(h, e, { outcome: 'skipped', skipped: decision.result.skipped });
      else if (decision.result.cancelled) record(h, e, { outcome: 'cancelled' });
      else record(h, e, { outcome: 'completed' });
      break;
    case 'retry':
      record(h, e, { outcome: 'retry', error: errorRecord(decision.error) });
      break;
    case 'dead':
      record(h, e, { outcome: 'dead', error: reasonRecord(decision.reason) });
      break;
    case 'pause':
      record(h, e, { outcome: 'pause', error: { class: decision.code, message: cleanText(decision.reason) } });
      break;
    case 'wait':
      record(h, e, { outcome: 'wait' });
      break;
    case 'delay':
      // A job handed back (its handler runs elsewhere) or a burst pushed back ran nothing: not an attempt.
      // A schedule's run always runs it (no flow checks before it), so a 429's delay is an attempt.
      if (e.run || e.attempt.kind === 'schedule') {
        record(h, e, { outcome: 'delay', error: { class: 'delay', message: `run again at ${new Date(decision.until).toISOString()}` } });
      }
      break;
  }
}

/** A delivery's fan-out (its receipt, event, keys and runs), or its dead-lettering as invalid. */
function fannedOut(h: HistoryState, e: FannedOutEvent): void {
  const d = e.delivery;
  try {
    if (!e.ok) {
      const code = (e.error as { code?: unknown } | null)?.code;
      if (code === 'invalid_delivery')
        h.writer.invalid(d.key, receipt(d), d.name, cleanText(String((e.error as Error).message)), redactedBody(h, d));
      return;
    }
    const env = e.envelope;
    const name = env?.name ?? d.name ?? '?';
    const event = isEventName(name) ? { name, data: env?.data } : null;
    h.writer.fannedOut(d.key, receipt(d), {
      event: name,
      conversation: event ? idOf(keyOf('conversation', event)) : null,
      contact: event ? idOf(keyOf('contact', event)) : null,
      handlers: e.runs,
      ...(e.duplicateChange !== undefined ? { duplicateChange: e.duplicateChange } : {}),
      ...(h.redactor ? { body: redactedBody(h, d) } : {}),
      raw: d.raw,
      ...(h.takenAt.has(d) ? { at: h.takenAt.get(d) } : {}),
    });
  } catch (err) {
    h.log.debug({ err: String(err) }, 'history: fan-out not recorded');
  }
}

function receipt(d: DeliveryFacts): Receipt {
  return { receivedAt: d.receivedAt, queuedAt: d.queuedAt, secretIndex: d.secretIndex, bytes: d.bytes, source: d.source };
}

function redactedBody(h: HistoryState, d: DeliveryFacts): string | undefined {
  return h.redactor ? h.redactor.body(d.raw).toString('utf8') : undefined;
}

/** `conversation:42` → `42`. */
function idOf(k: string | null): string | null {
  return k === null ? null : k.slice(k.indexOf(':') + 1);
}
