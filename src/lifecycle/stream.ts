/*
 * One typed, synchronous, in-process event stream: the shape both streams of
 * a process share (the worker's, src/lifecycle/bus.ts, and the ingest path's,
 * src/lifecycle/ingest-bus.ts). The code doing the work emits; observers
 * (metrics, history, tracing, capture) subscribe once, when the process is
 * wired. A subscriber that throws is skipped: observers never change an answer
 * or a job's outcome.
 */

/**
 * Where a subscriber has a unit of work run: tracing makes its span the active
 * context, so what the work starts (child spans, jobs it adds) is its child.
 * `run` calls `fn` once, at once. `traceparent`: the W3C trace context work
 * placed from within the scope carries on (the span it opened), so the code
 * emitting needs no tracing import to hand it on in its data.
 */
export interface Scope {
  run<T>(fn: () => T): T;
  readonly traceparent?: string;
}

/** An observer of a stream: one optional callback per event type it wants; an opening event's may return a {@link Scope}. */
export type SubscriberOf<E extends { readonly type: string }, Opening extends E['type']> = {
  readonly [K in E['type']]?: (event: Extract<E, { type: K }>) => K extends Opening ? Scope | undefined | void : void;
};

type Listener = (event: never) => Scope | undefined | void;

/** The bus of one stream: `E`, its events; `Opening`, the types whose subscribers may return a scope. */
export class EventStream<E extends { readonly type: string }, Opening extends E['type']> {
  private readonly listeners: Partial<Record<E['type'], Listener[]>> = {};
  private count = 0;

  /** Adds a subscriber's callbacks (undefined: nothing). */
  subscribe(subscriber: SubscriberOf<E, Opening> | undefined): this {
    if (!subscriber) return this;
    for (const [type, fn] of Object.entries(subscriber) as [E['type'], Listener | undefined][]) {
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
  wants(type: E['type']): boolean {
    return this.listeners[type] !== undefined;
  }

  emit(event: E): void {
    const list = this.listeners[event.type as E['type']];
    if (!list) return;
    for (const fn of list) {
      try {
        (fn as (e: E) => unknown)(event);
      } catch {
        // An observer must not change the outcome.
      }
    }
  }

  /** Emits an opening event; the scopes its subscribers returned (none: undefined). */
  private open(event: Extract<E, { type: Opening }>): Scope[] | undefined {
    const list = this.listeners[event.type as E['type']];
    if (!list) return undefined;
    let scopes: Scope[] | undefined;
    for (const l of list) {
      try {
        const scope = (l as (e: E) => Scope | undefined | void)(event);
        if (scope) (scopes ??= []).push(scope);
      } catch {
        // as in emit
      }
    }
    return scopes;
  }

  /**
   * Emits an opening event and runs `fn` in the scopes its subscribers returned
   * (the first subscriber's outermost), handing it the trace context they carry
   * (the innermost scope's that has one).
   */
  within<T>(event: Extract<E, { type: Opening }>, fn: (traceparent: string | undefined) => T): T {
    const scopes = this.open(event);
    if (!scopes) return fn(undefined);
    const traceparent = carriedBy(scopes);
    let run = () => fn(traceparent);
    for (let i = scopes.length - 1; i >= 0; i--) {
      const scope = scopes[i] as Scope;
      const inner = run;
      run = () => scope.run(inner);
    }
    return run();
  }

  /** Emits an opening event whose work is not run here (a job added later): the trace context it carries on. */
  carried(event: Extract<E, { type: Opening }>): string | undefined {
    const scopes = this.open(event);
    return scopes ? carriedBy(scopes) : undefined;
  }
}

function carriedBy(scopes: readonly Scope[]): string | undefined {
  for (let i = scopes.length - 1; i >= 0; i--) {
    const tp = (scopes[i] as Scope).traceparent;
    if (tp !== undefined) return tp;
  }
  return undefined;
}
