import type { IngestEvent, PumpFacts, RequestFacts, StoreOutcome, StoringFacts } from './ingest-events.js';
import { EventStream, type SubscriberOf } from './stream.js';

/** The events that open a unit of work; their subscribers may return a scope it runs in. */
type Opening = 'received' | 'storing' | 'pumping';

/** An observer of the ingest path: one optional callback per event type it wants. */
export type IngestSubscriber = SubscriberOf<IngestEvent, Opening>;

/**
 * The ingest stream of one process (src/lifecycle/ingest-events.ts): the
 * webhook route, the durable write, the spool drainer and the pump emit;
 * metrics, tracing, capture and history subscribe when runtime wires the
 * process. With no subscriber for an event, its emitter builds nothing.
 */
export class IngestBus extends EventStream<IngestEvent, Opening> {
  /** One request: `received` (the route run in its subscribers' scopes); a route that throws ends it with `answered` and the error. */
  async receipt<R>(request: RequestFacts, route: () => Promise<R>): Promise<R> {
    try {
      return await this.within({ type: 'received', request }, route);
    } catch (error) {
      this.emit({ type: 'answered', request, ok: false, error });
      throw error;
    }
  }

  /**
   * One durable write: `storing` (`put` run in its subscribers' scopes, given the trace context the stored
   * delivery carries), then `stored` with what `put` returned or threw.
   */
  async store<O extends StoreOutcome>(delivery: StoringFacts, put: (traceparent: string | undefined) => Promise<O>): Promise<O> {
    let outcome: O;
    try {
      outcome = await this.within({ type: 'storing', delivery }, put);
    } catch (error) {
      this.emit({ type: 'stored', delivery, ok: false, error });
      throw error;
    }
    this.emit({ type: 'stored', delivery, ok: true, outcome });
    return outcome;
  }

  /**
   * One pump batch: `pumping` for each delivery, then `add` given the trace context each one's job carries
   * (in the order of `deliveries`), then `pumped` for each with what `add` did.
   */
  async pump<R>(deliveries: readonly PumpFacts[], add: (traceparents: readonly (string | undefined)[]) => Promise<R>): Promise<R> {
    const carried = deliveries.map((delivery) => this.carried({ type: 'pumping', delivery }));
    let result: R;
    try {
      result = await add(carried);
    } catch (error) {
      for (const delivery of deliveries) this.emit({ type: 'pumped', delivery, ok: false, error });
      throw error;
    }
    for (const delivery of deliveries) this.emit({ type: 'pumped', delivery, ok: true });
    return result;
  }
}
