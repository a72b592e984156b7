import type { Envelope } from '../events/index.js';

/*
 * The lifecycle of work in a worker process, as one typed stream of events.
 * The worker emits them (the `events` worker's fan-out, each handler or
 * schedule attempt, its steps and API calls); metrics, history and tracing
 * subscribe (src/lifecycle/bus.ts). Nothing here names a worker or runtime
 * module: every field is plain data, so an observer imports this folder only.
 *
 *   received ─> fanned-out                          (one per `events` job)
 *   attempt-started ─> step*, api-call*, wait* ─> attempt-ended   (one per attempt)
 */

/** A delivery as the `events` worker took it, before fan-out. */
export interface DeliveryFacts {
  readonly key: string;
  /** The event name as received (may be unknown to the catalogue). */
  readonly name: string | null;
  readonly receivedAt: string;
  /** When the pump queued it (the `events` job's timestamp, ms). */
  readonly queuedAt: number;
  readonly secretIndex: number;
  /** Size of the raw body. */
  readonly bytes: number;
  /** `webhook`, or what made it: `reconcile`, `poll`. */
  readonly source: string;
  /** The W3C trace context it carries (tracing on). */
  readonly traceparent: string | undefined;
  /** The exact raw body (parse it no more: `fanned-out` carries the envelope). */
  readonly raw: Uint8Array;
  /** The `events` job: its queue, id and attempt number (1 for the first). */
  readonly job: { readonly queue: string; readonly id: string | undefined; readonly attempt: number };
}

/** The `events` worker took a delivery: fan-out follows, run in the scopes its subscribers return. */
export interface ReceivedEvent {
  readonly type: 'received';
  readonly delivery: DeliveryFacts;
}

/** One handler's run as fan-out placed it. */
export interface PlacedRun {
  readonly id: string;
  /** `queued`, `ordered`, `waiting`, `debounced`, `folded`, `repeat`. */
  readonly placement: string;
  readonly priority: string;
}

/**
 * Fan-out ended: runs placed (or nobody subscribed, or a duplicate change), or it failed (`error`; an invalid delivery's
 * has code `invalid_delivery`).
 */
export type FannedOutEvent = {
  readonly type: 'fanned-out';
  readonly delivery: DeliveryFacts;
  /** The body parsed once, by the worker (undefined when fan-out failed before parsing). */
  readonly envelope: Envelope | undefined;
} & (
  | { readonly ok: true; readonly runs: readonly PlacedRun[]; readonly duplicateChange?: string }
  | { readonly ok: false; readonly error: unknown }
);

/** One attempt of a handler job, or of a schedule's run for one tick. */
export interface AttemptRef {
  readonly kind: 'handler' | 'schedule';
  /** The BullMQ queue it runs from (`handlers-high`, `handlers`, `handlers-low`, `schedules`). */
  readonly queue: string;
  readonly jobId: string;
  /** The delivery key (`schedule:<id>:<tick ISO>` for a schedule's run). */
  readonly key: string;
  /** The handler (or schedule) id. */
  readonly handler: string;
  /** The event name (`schedule` for a schedule's run). */
  readonly event: string;
  /** 1 for the first run; a run delayed by a 429 keeps its number. */
  readonly number: number;
  /** Runs the job has in all. */
  readonly attempts: number;
  readonly startedAt: number;
  readonly traceparent: string | undefined;
  /** The first run of a handler job: how long it waited in its queue since it could run (ms). */
  readonly waitMs?: number;
  /** A schedule's run: its tick (ms). */
  readonly tick?: number;
  /** A re-run (`switchyard rerun`; src/queue/jobs.ts RerunRef): its id, the original run's job id, its batch. */
  readonly rerun?: { readonly id: string; readonly of: string; readonly batch?: string; readonly fromStep?: string };
}

export interface AttemptStartedEvent {
  readonly type: 'attempt-started';
  readonly attempt: AttemptRef;
}

/**
 * What becomes of a job after an attempt (the processor's decision; `Skip`: why a run was completed
 * without running its handler, src/worker/processor.ts `SkipReason`).
 */
export type AttemptDecision<Skip extends string = string> =
  | { readonly kind: 'completed'; readonly result: { readonly ms: number; readonly skipped?: Skip; readonly cancelled?: string } }
  /** `error`: what the run threw, when a run failed (its stack stays with the dead letter). */
  | { readonly kind: 'dead'; readonly reason: string; readonly error?: Error }
  | { readonly kind: 'delay'; readonly until: number }
  | { readonly kind: 'pause'; readonly reason: string; readonly code: string; readonly at: string }
  | { readonly kind: 'retry'; readonly error: Error }
  /**
   * The run sleeps or waits (`ctx.sleep`, `ctx.waitForEvent`): parked until `until` (ms), unless an event
   * wakes it first; no attempt spent. `waitIds`: the waits and cancelOn entries that may wake it early.
   */
  | {
      readonly kind: 'wait';
      readonly until: number;
      readonly name: string;
      readonly wait: 'sleep' | 'wait-for-event';
      readonly waitIds: readonly string[];
    };

/** The runner ran the handler: how the run ended (its verdict) and how long it took. */
export interface RunReport {
  readonly event: string;
  readonly outcome: 'completed' | 'retry' | 'delay' | 'dead' | 'pause' | 'wait';
  readonly ms: number;
}

/** An attempt ended with the processor's decision, or with `error` when the processor itself failed (Redis). */
export type AttemptEndedEvent = {
  readonly type: 'attempt-ended';
  readonly attempt: AttemptRef;
  readonly endedAt: number;
  /** Set when the handler ran (not only the flow checks before it). A schedule's run always runs. */
  readonly run: RunReport | undefined;
  /** A run completed without running its handler: why, and the event it was for. */
  readonly skipped: { readonly reason: string; readonly event: string } | undefined;
  /** A debounced run took its burst on its first attempt: how many events were folded into it. */
  readonly folded: number | undefined;
} & ({ readonly ok: true; readonly decision: AttemptDecision } | { readonly ok: false; readonly error: unknown });

/** One HTTP attempt of one API call (the client's report; src/api/transport.ts CallEvent has these fields). */
export interface ApiCallFacts {
  readonly op: string;
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  readonly attempt: number;
  readonly status: number;
  readonly durationMs: number;
  readonly rateLimitWaitMs: number;
  readonly priority: string;
  readonly replayed: boolean;
  readonly quotaRemaining: number | undefined;
  readonly error: { readonly name: string; readonly message: string; readonly code?: string } | undefined;
  readonly willRetry: boolean;
}

/** An API call's attempt ended; `attempt` is the handler or schedule attempt that made it (absent: the poller's). */
export interface ApiCallEvent {
  readonly type: 'api-call';
  readonly attempt: AttemptRef | undefined;
  readonly call: ApiCallFacts;
}

/**
 * A `ctx.step` of an attempt: `stored` (a previous attempt ran it; its result is
 * used), `started` (not stored: it runs now), `done` (it ran and its result is stored).
 * A step `started` and never `done` failed.
 */
export interface StepEvent {
  readonly type: 'step';
  readonly attempt: AttemptRef;
  readonly name: string;
  readonly state: 'stored' | 'started' | 'done';
}

/**
 * A durable wait of an attempt (`ctx.sleep`, `ctx.waitForEvent`): begun
 * (`outcome` absent; the run parks until `dueAt` unless it is over at once),
 * then over: `due` (a sleep's time came), `event` (the event that answered it:
 * `eventKey`, its delivery key), `timeout`, or `cancelled` (a cancelOn event,
 * `eventKey`, ended the run while it slept or waited); `held`: due, but parked
 * again for a moment because a delivery received before its due time
 * (`eventKey`) is not fanned out yet (src/worker/hold.ts).
 */
export interface WaitEvent {
  readonly type: 'wait';
  readonly attempt: AttemptRef;
  readonly name: string;
  readonly kind: 'sleep' | 'wait-for-event';
  readonly dueAt: number;
  readonly outcome?: 'due' | 'event' | 'timeout' | 'cancelled' | 'held';
  /** The event name waited for (a wait) or that cancelled the run. */
  readonly event?: string;
  /** The delivery key of the event that answered the wait or cancelled the run. */
  readonly eventKey?: string;
}

export type LifecycleEvent =
  ReceivedEvent | FannedOutEvent | AttemptStartedEvent | AttemptEndedEvent | ApiCallEvent | StepEvent | WaitEvent;
export type LifecycleType = LifecycleEvent['type'];
export type EventOf<T extends LifecycleType> = Extract<LifecycleEvent, { type: T }>;
