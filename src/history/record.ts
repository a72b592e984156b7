import type { ApiCallFacts, WaitEvent } from '../lifecycle/index.js';
import type { RunNote } from '../queue/index.js';
import { redactText } from '../log/index.js';

/**
 * What the history of one delivery holds, entry by entry. Times are epoch ms.
 * Nothing here carries a secret (tokens, webhook secrets, signatures never
 * reach these records) or personal data: paths, error messages and reasons
 * are masked as the log masks them, and no body is kept unless
 * HISTORY_BODIES=true (then redacted as captures are).
 */
export type HistoryEntry = FanOutEntry | InvalidEntry | AttemptEntry | BodyEntry | OperatorEntry;

/** An operator cancelled or woke the delivery's parked run (`switchyard waits cancel|wake`, the admin's waits page): who, why. */
export interface OperatorEntry extends RunNote {
  readonly kind: 'operator';
}

/** The events worker placed one run per subscribed handler. */
export interface FanOutEntry {
  readonly kind: 'fanout';
  readonly at: number;
  /** One per subscribed handler: how fan-out placed its run and at which priority; empty when nobody subscribes. */
  readonly handlers: readonly { readonly id: string; readonly placement: string; readonly priority: string }[];
  /** Another delivery of the same change (its change key) was dispatched already: nothing runs for this one. */
  readonly duplicateChange?: string;
}

/** The delivery is not a valid event: dead-lettered in the `events` queue without fan-out. */
export interface InvalidEntry {
  readonly kind: 'invalid';
  readonly at: number;
  readonly reason: string;
}

/** One run of one handler's job (an attempt), written once when it ended. */
export interface AttemptEntry {
  readonly kind: 'attempt';
  /** When it ended. */
  readonly at: number;
  readonly startedAt: number;
  readonly handler: string;
  /** 1 for the first run; a run delayed by a 429 keeps its number. */
  readonly attempt: number;
  /** The job, when its id is not the usual `d/<key>/<handler>` (a debounced burst's job). */
  readonly job?: string;
  readonly outcome: AttemptOutcome;
  /** Why a completed run did not run its handler. */
  readonly skipped?: string;
  readonly error?: { readonly class: string; readonly message: string };
  readonly steps: readonly StepRecord[];
  readonly calls: readonly CallRecord[];
  /** The sleeps and waits of the attempt: begun (parked until `dueAt`) or over (`outcome`). */
  readonly waits?: readonly WaitRecord[];
  /** Calls left out of `calls` to keep the entry within its size cap (the first and the last ones are kept). */
  readonly callsDropped?: number;
}

/**
 * `completed` ran (or was skipped: see `skipped`); `retry`, `delay`, `dead`, `pause` as the processor decided;
 * `wait`: parked in a sleep or wait (it runs again when woken); `cancelled`: a cancelOn event ended it while it
 * slept or waited; `error`: the processor itself failed (Redis).
 */
export type AttemptOutcome = 'completed' | 'skipped' | 'retry' | 'delay' | 'dead' | 'pause' | 'wait' | 'cancelled' | 'error';

/** A sleep or wait of an attempt (`ctx.sleep`, `ctx.waitForEvent`), or the cancellation of its run. */
/** The lifecycle's wait event as kept (its `outcome` absent: it began, the run parks until `dueAt`). */
export type WaitRecord = Omit<WaitEvent, 'type' | 'attempt'>;

/** HISTORY_BODIES=true: the event body, redacted (personal data replaced by fakes, as captures do). */
export interface BodyEntry {
  readonly kind: 'body';
  readonly at: number;
  readonly body: string;
}

/** A `ctx.step`: run in this attempt, taken from the store (a previous attempt ran it), or failed (threw). */
export interface StepRecord {
  readonly name: string;
  readonly source: 'run' | 'stored' | 'failed';
}

/** One HTTP attempt of one API call. */
export interface CallRecord {
  readonly op: string;
  readonly method: string;
  /** Without the query string; contact identifiers (email:, phone:) and personal data masked. */
  readonly path: string;
  /** 0: no answer (network error, timeout). */
  readonly status: number;
  readonly idempotencyKey: string | null;
  readonly replayed: boolean;
  readonly ms: number;
  /** Time waited for the shared rate limiter before this attempt. */
  readonly waitMs: number;
  /** The client's own attempt number (its retries of one call). */
  readonly try: number;
  readonly error?: string;
}

/** Longest message or reason kept. */
export const MAX_TEXT = 400;
/** Calls kept per attempt: the first and the last ones (the failing call is the last). */
export const MAX_CALLS = 40;
const KEEP_FIRST_CALLS = 10;
/** Size cap of one entry's JSON (bytes); a bigger attempt keeps fewer calls and steps. */
export const MAX_ENTRY_BYTES = 6_000;

/** Masked and cut free text. */
export function cleanText(text: string, max = MAX_TEXT): string {
  const masked = redactText(text);
  return masked.length > max ? `${masked.slice(0, max - 1)}…` : masked;
}

/** A request path as history keeps it: decoded for reading, contact identifiers and personal data masked. */
export function cleanPath(path: string): string {
  return path
    .split('/')
    .map((seg) => {
      let s = seg;
      try {
        s = decodeURIComponent(seg);
      } catch {
        /* kept as sent */
      }
      if (/^email:/i.test(s)) return 'email:[email]';
      if (/^phone:/i.test(s)) return 'phone:[phone]';
      return redactText(s);
    })
    .join('/');
}

/** The history record of one API attempt. */
export function callRecord(e: ApiCallFacts): CallRecord {
  return {
    op: e.op,
    method: e.method,
    path: cleanPath(e.path),
    status: e.status,
    idempotencyKey: e.idempotencyKey ?? null,
    replayed: e.replayed,
    ms: Math.round(e.durationMs),
    waitMs: Math.round(e.rateLimitWaitMs),
    try: e.attempt,
    ...(e.error ? { error: cleanText(`${e.error.name}: ${e.error.message}`, 200) } : {}),
  };
}

/** An error's class and message, masked; a reason "Name: message" (how the classifier words it) split alike. */
export function errorRecord(err: unknown): { class: string; message: string } {
  if (err instanceof Error) return { class: err.name || 'Error', message: cleanText(err.message) };
  return { class: 'Error', message: cleanText(String(err)) };
}

export function reasonRecord(reason: string): { class: string; message: string } {
  const m = /^([A-Z][A-Za-z0-9_]*(?:Error|Exception)?): ([\s\S]*)$/.exec(reason);
  return m ? { class: m[1] as string, message: cleanText(m[2] as string) } : { class: 'reason', message: cleanText(reason) };
}

/**
 * The JSON of an attempt within {@link MAX_ENTRY_BYTES}: past {@link MAX_CALLS}
 * calls, the first 10 and the last 30 are kept; then, while still too big,
 * calls from the middle and then steps are left out (their count is said).
 */
export function attemptJson(entry: AttemptEntry): string {
  let calls = entry.calls;
  let dropped = entry.callsDropped ?? 0;
  if (calls.length > MAX_CALLS) {
    dropped += calls.length - MAX_CALLS;
    calls = [...calls.slice(0, KEEP_FIRST_CALLS), ...calls.slice(calls.length - (MAX_CALLS - KEEP_FIRST_CALLS))];
  }
  let steps = entry.steps;
  const build = () => JSON.stringify({ ...entry, steps, calls, ...(dropped > 0 ? { callsDropped: dropped } : {}) });
  let json = build();
  while (Buffer.byteLength(json) > MAX_ENTRY_BYTES && (calls.length > 2 || steps.length > 0)) {
    if (calls.length > 2) {
      // Drop from the middle, keeping the first call and the last ones (the failure).
      const cut = Math.max(1, Math.ceil(calls.length / 4));
      const keepHead = Math.min(KEEP_FIRST_CALLS, Math.floor((calls.length - cut) / 3));
      calls = [...calls.slice(0, keepHead), ...calls.slice(keepHead + cut)];
      dropped += cut;
    } else {
      steps = steps.slice(0, Math.floor(steps.length / 2));
    }
    json = build();
  }
  return json;
}
