import { randomBytes } from 'node:crypto';
import { createRedactor, type Redactor } from '../pii/index.js';
import type { Config } from '../config/index.js';
import { isEventName } from '../events/index.js';
import { keyOf } from '../handler/index.js';
import type { LifecycleSubscriber, AttemptDecision, AttemptEndedEvent, AttemptRef, DeliveryFacts } from '../lifecycle/index.js';
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
  return config.history.enabled ? new HistoryWriter(redis, { prefix: config.queuePrefix, ttlMs: config.history.ttlMs }, log) : undefined;
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
  if (!writer) return undefined;
  const redactor = bodyRedactor(config);
  /** The calls and steps of attempts still running (only those that made any). */
  const runs = new WeakMap<AttemptRef, RunRecord>();
  const runOf = (ref: AttemptRef): RunRecord => {
    let run = runs.get(ref);
    if (!run) runs.set(ref, (run = { calls: [], steps: [], waits: [] }));
    return run;
  };

  function record(e: AttemptEndedEvent, o: Pick<AttemptEntry, 'outcome' | 'skipped' | 'error'>): void {
    const ref = e.attempt;
    const run = runs.get(ref);
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
    writer?.attempt(ref.key, entry, ref.jobId);
  }

  function ended(e: AttemptEndedEvent, decision: AttemptDecision): void {
    switch (decision.kind) {
      case 'completed':
        if (decision.result.skipped) record(e, { outcome: 'skipped', skipped: decision.result.skipped });
        else if (decision.result.cancelled) record(e, { outcome: 'cancelled' });
        else record(e, { outcome: 'completed' });
        break;
      case 'retry':
        record(e, { outcome: 'retry', error: errorRecord(decision.error) });
        break;
      case 'dead':
        record(e, { outcome: 'dead', error: reasonRecord(decision.reason) });
        break;
      case 'pause':
        record(e, { outcome: 'pause', error: { class: decision.code, message: cleanText(decision.reason) } });
        break;
      case 'wait':
        record(e, { outcome: 'wait' });
        break;
      case 'delay':
        // A job handed back (its handler runs elsewhere) or a burst pushed back ran nothing: not an attempt.
        // A schedule's run always runs it (no flow checks before it), so a 429's delay is an attempt.
        if (e.run || e.attempt.kind === 'schedule') {
          record(e, { outcome: 'delay', error: { class: 'delay', message: `run again at ${new Date(decision.until).toISOString()}` } });
        }
        break;
    }
  }

  const receipt = (d: DeliveryFacts): Receipt => ({
    receivedAt: d.receivedAt,
    queuedAt: d.queuedAt,
    secretIndex: d.secretIndex,
    bytes: d.bytes,
    source: d.source,
  });
  const redactedBody = (d: DeliveryFacts): string | undefined => (redactor ? redactor.body(d.raw).toString('utf8') : undefined);

  /** When the `events` worker took each delivery: its fan-out's time in the history (the runs it places may start before it ends). */
  const takenAt = new WeakMap<DeliveryFacts, number>();

  const subscriber: LifecycleSubscriber = {
    received: ({ delivery }) => {
      takenAt.set(delivery, Date.now());
    },
    'attempt-started': ({ attempt }) => {
      if (attempt.kind === 'schedule' && attempt.tick !== undefined) writer.scheduled(attempt.key, attempt.tick);
    },
    'api-call': ({ attempt, call }) => {
      if (attempt) runOf(attempt).calls.push(callRecord(call));
    },
    step: ({ attempt, name, state }) => {
      const run = runOf(attempt);
      // A step not stored yet counts as failed until it is done.
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
    },
    wait: (e) => {
      const { type: _type, attempt, ...w } = e;
      runOf(attempt).waits.push(w);
    },
    'attempt-ended': (e) => {
      if (e.ok) ended(e, e.decision);
      else record(e, { outcome: 'error', error: errorRecord(e.error) });
    },
    'fanned-out': (e) => {
      const d = e.delivery;
      try {
        if (!e.ok) {
          const code = (e.error as { code?: unknown } | null)?.code;
          if (code === 'invalid_delivery')
            writer.invalid(d.key, receipt(d), d.name, cleanText(String((e.error as Error).message)), redactedBody(d));
          return;
        }
        const env = e.envelope;
        const name = env?.name ?? d.name ?? '?';
        const event = isEventName(name) ? { name, data: env?.data } : null;
        writer.fannedOut(d.key, receipt(d), {
          event: name,
          conversation: event ? idOf(keyOf('conversation', event)) : null,
          contact: event ? idOf(keyOf('contact', event)) : null,
          handlers: e.runs,
          ...(e.duplicateChange !== undefined ? { duplicateChange: e.duplicateChange } : {}),
          ...(redactor ? { body: redactedBody(d) } : {}),
          ...(takenAt.has(d) ? { at: takenAt.get(d) } : {}),
        });
      } catch (err) {
        log.debug({ err: String(err) }, 'history: fan-out not recorded');
      }
    },
  };
  return { subscriber, flush: () => writer.flush() };
}

/** `conversation:42` → `42`. */
function idOf(k: string | null): string | null {
  return k === null ? null : k.slice(k.indexOf(':') + 1);
}
