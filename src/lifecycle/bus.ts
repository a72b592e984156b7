import type {
  ApiCallFacts,
  AttemptDecision,
  AttemptRef,
  AttemptStartedEvent,
  EventOf,
  LifecycleEvent,
  LifecycleType,
  ReceivedEvent,
  RunReport,
  StepEvent,
  WaitEvent,
} from './events.js';

/**
 * Where a subscriber has a fan-out or an attempt run: tracing makes its span
 * the active context, so the handler jobs fan-out adds, the handler's own
 * spans and its API calls are children of it. `run` calls `fn` once, at once.
 */
export interface Scope {
  run<T>(fn: () => T): T;
}

/** The events that open a unit of work; their subscribers may return a {@link Scope} it runs in. */
type Opening = 'received' | 'attempt-started';

/** An observer of the lifecycle: one optional callback per event type it wants. */
export type LifecycleSubscriber = {
  readonly [K in LifecycleType]?: (event: EventOf<K>) => K extends Opening ? Scope | undefined | void : void;
};

type Listener = (event: never) => Scope | undefined | void;

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
export class LifecycleBus {
  private readonly listeners: { [K in LifecycleType]?: Listener[] } = {};
  private count = 0;

  /** Adds a subscriber's callbacks (undefined: nothing). */
  subscribe(subscriber: LifecycleSubscriber | undefined): this {
    if (!subscriber) return this;
    for (const [type, fn] of Object.entries(subscriber) as [LifecycleType, Listener | undefined][]) {
      if (typeof fn !== 'function') continue;
      (this.listeners[type] ??= []).push(fn);
      this.count++;
    }
    return this;
  }

  /** Whether anyone subscribes to anything. */
  get active(): boolean {
    return this.count > 0;
  }

  /** Whether anyone subscribes to `type` (an emitter may skip building the event). */
  wants(type: LifecycleType): boolean {
    return this.listeners[type] !== undefined;
  }

  emit(event: LifecycleEvent): void {
    const list = this.listeners[event.type];
    if (!list) return;
    for (const fn of list) {
      try {
        (fn as (e: LifecycleEvent) => unknown)(event);
      } catch {
        // An observer must not change the job's outcome.
      }
    }
  }

  /** Emits an opening event and runs `fn` in the scopes its subscribers returned (the first subscriber's outermost). */
  within<T>(event: ReceivedEvent | AttemptStartedEvent, fn: () => T): T {
    const list = this.listeners[event.type];
    if (!list) return fn();
    let scopes: Scope[] | undefined;
    for (const l of list) {
      try {
        const scope = (l as (e: LifecycleEvent) => Scope | undefined | void)(event);
        if (scope) (scopes ??= []).push(scope);
      } catch {
        // as in emit
      }
    }
    if (!scopes) return fn();
    let run = fn;
    for (let i = scopes.length - 1; i >= 0; i--) {
      const scope = scopes[i] as Scope;
      const inner = run;
      run = () => scope.run(inner);
    }
    return run();
  }

  /**
   * One attempt: `attempt-started` (run in the scopes its subscribers return),
   * then `attempt-ended` with the decision `run` returned, or with what it
   * threw. `run` gets the attempt's observer (undefined when nobody subscribes).
   */
  async attempt<D extends AttemptDecision>(ref: AttemptRef, run: (observer: AttemptObserver | undefined) => Promise<D>): Promise<D> {
    if (this.count === 0) return run(undefined);
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
