import type { ApiCallFacts, AttemptDecision, AttemptRef, LifecycleEvent, RunReport, StepEvent, WaitEvent } from './events.js';
import { EventStream, type Scope, type SubscriberOf } from './stream.js';

export type { Scope };

/** The events that open a unit of work; their subscribers may return a {@link Scope} it runs in. */
type Opening = 'received' | 'attempt-started';

/**
 * An observer of the worker's lifecycle: one optional callback per event type it wants. Tracing's scope of
 * `received` carries the fan-out span's `traceparent`, which fan-out gives the handler jobs it adds.
 */
export type LifecycleSubscriber = SubscriberOf<LifecycleEvent, Opening>;

/**
 * What an attempt reports while it runs; the worker hands it to the processor
 * and, through the handler context, to the API client and `ctx.step`. Each
 * report is tagged with its attempt, so no subscriber needs async context to
 * tell attempts apart.
 */
export interface AttemptObserver {
  readonly ref: AttemptRef;
  /** An API call's attempt ended (the client's `onCall`). */
  call(call: ApiCallFacts): void;
  step(name: string, state: StepEvent['state']): void;
  /** A sleep or wait began or ended (durable waits). */
  wait(wait: Omit<WaitEvent, 'type' | 'attempt'>): void;
  /** The runner ran the handler. */
  ran(report: RunReport): void;
  /** The run completed without running its handler. */
  skipped(reason: string, event: string): void;
  /** A debounced run took its burst of `count` events (its first attempt). */
  folded(count: number): void;
}

/**
 * The lifecycle stream of one worker process: synchronous, in-process, typed.
 * The worker emits; observers subscribe once, when the worker is built. A
 * subscriber that throws is skipped (observers never change a job's outcome).
 * With no subscriber, nothing is built per job: `attempt` and `within` run
 * their work directly.
 */
export class LifecycleBus extends EventStream<LifecycleEvent, Opening> {
  /**
   * One attempt: `attempt-started` (run in the scopes its subscribers return),
   * then `attempt-ended` with the decision `run` returned, or with what it
   * threw. `run` gets the attempt's observer (undefined when nobody subscribes).
   */
  async attempt<D extends AttemptDecision>(ref: AttemptRef, run: (observer: AttemptObserver | undefined) => Promise<D>): Promise<D> {
    if (!this.active) return run(undefined);
    const notes = new AttemptNotes(this, ref);
    let decision: D;
    try {
      decision = await this.within({ type: 'attempt-started', attempt: ref }, () => run(notes));
    } catch (error) {
      this.emit({
        type: 'attempt-ended',
        attempt: ref,
        endedAt: Date.now(),
        run: notes.run,
        skipped: notes.skip,
        folded: notes.fold,
        ok: false,
        error,
      });
      throw error;
    }
    this.emit({
      type: 'attempt-ended',
      attempt: ref,
      endedAt: Date.now(),
      run: notes.run,
      skipped: notes.skip,
      folded: notes.fold,
      ok: true,
      decision,
    });
    return decision;
  }
}

/** The observer of one attempt: emits its calls and steps, keeps what `attempt-ended` reports. */
class AttemptNotes implements AttemptObserver {
  run: RunReport | undefined;
  skip: { reason: string; event: string } | undefined;
  fold: number | undefined;

  constructor(
    private readonly bus: LifecycleBus,
    readonly ref: AttemptRef,
  ) {}

  call(call: ApiCallFacts): void {
    this.bus.emit({ type: 'api-call', attempt: this.ref, call });
  }

  step(name: string, state: StepEvent['state']): void {
    this.bus.emit({ type: 'step', attempt: this.ref, name, state });
  }

  wait(wait: Omit<WaitEvent, 'type' | 'attempt'>): void {
    this.bus.emit({ type: 'wait', attempt: this.ref, ...wait });
  }

  ran(report: RunReport): void {
    this.run = report;
  }

  skipped(reason: string, event: string): void {
    this.skip = { reason, event };
  }

  folded(count: number): void {
    this.fold = count;
  }
}
