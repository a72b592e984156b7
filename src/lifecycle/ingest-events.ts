/*
 * The ingest path of a process as one typed stream of events: the receiver's
 * webhook route, its durable write (Redis, or the disk spool), the spool's
 * drain and the pump. They emit on an IngestBus (src/lifecycle/ingest-bus.ts);
 * metrics, tracing, capture and history subscribe (wired by runtime). Every
 * field is plain data, so an observer imports this folder only.
 *
 *   received ─> storing ─> stored ─> answered      (one per webhook request; no store when refused)
 *   drained                                        (spooled deliveries moved into Redis)
 *   pumping ─> pumped                              (one per delivery the pump queues)
 */

/** Every way a webhook request can end; the metrics label and the log field. */
export type DeliveryOutcome = 'accepted' | 'duplicate' | 'spooled' | 'bad_signature' | 'too_large' | 'timeout' | 'unavailable';

/** How the route answered a request: its outcome and timing, fixed, non-personal fields only. */
export interface DeliveryReport {
  readonly outcome: DeliveryOutcome;
  readonly key?: string;
  readonly event?: string | null;
  readonly secretIndex?: number;
  readonly bytes?: number;
  readonly ms: number;
  /** For bad_signature: missing, malformed or mismatch. */
  readonly reason?: string;
}

/** A webhook request as the route took it. */
export interface RequestFacts {
  readonly method: string;
  readonly path: string;
  /** The route's path pattern (WEBHOOK_PATH). */
  readonly route: string;
}

/** A webhook request arrived: the route runs in the scopes its subscribers return (tracing's receipt span). */
export interface RequestReceivedEvent {
  readonly type: 'received';
  readonly request: RequestFacts;
}

/** The route answered (`ok`), or threw (`error`: the app's error answer follows). */
export type AnsweredEvent = { readonly type: 'answered'; readonly request: RequestFacts } & (
  { readonly ok: true; readonly status: number; readonly report: DeliveryReport } | { readonly ok: false; readonly error: unknown }
);

/** A verified delivery on its way to the durable store. */
export interface StoringFacts {
  readonly key: string;
  readonly name: string | null;
  readonly receivedAt: string;
  /** The exact raw body. */
  readonly bytes: Uint8Array;
  /** Every request header, as received (capture keeps them, minus secrets). */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The durable write of a verified delivery begins: it runs in the scopes its subscribers return, and the
 * delivery stored carries their trace context (tracing's append span).
 */
export interface StoringEvent {
  readonly type: 'storing';
  readonly delivery: StoringFacts;
}

/** What the durable store made of a delivery. */
export type StoreOutcome = 'accepted' | 'duplicate' | 'spooled';

/** The durable write ended: `accepted` (Redis), `duplicate`, `spooled` (the disk spool), or no store could take it (`error`). */
export type StoredEvent = { readonly type: 'stored'; readonly delivery: StoringFacts } & (
  { readonly ok: true; readonly outcome: StoreOutcome } | { readonly ok: false; readonly error: unknown }
);

/** The spool drainer moved `count` spooled deliveries of one segment into Redis. */
export interface DrainedEvent {
  readonly type: 'drained';
  readonly count: number;
}

/** A delivery the pump moves from the inbox into the `events` queue (one batch's `addBulk`). */
export interface PumpFacts {
  readonly key: string;
  readonly name: string | null;
  /** The `events` job's id. */
  readonly jobId: string | undefined;
  /** The queue it goes to (`events`). */
  readonly queue: string;
  /** Deliveries in the batch it goes with. */
  readonly batch: number;
  /** The trace context the delivery carried from the receiver. */
  readonly traceparent: string | undefined;
}

/** The pump is about to queue a delivery: its `events` job carries the trace context the subscribers' scopes carry (tracing's send span). */
export interface PumpingEvent {
  readonly type: 'pumping';
  readonly delivery: PumpFacts;
}

/** The batch holding the delivery was queued (`ok`), or `addBulk` failed (the batch stays in flight and is tried again). */
export type PumpedEvent = { readonly type: 'pumped'; readonly delivery: PumpFacts } & (
  { readonly ok: true } | { readonly ok: false; readonly error: unknown }
);

export type IngestEvent = RequestReceivedEvent | AnsweredEvent | StoringEvent | StoredEvent | DrainedEvent | PumpingEvent | PumpedEvent;
export type IngestType = IngestEvent['type'];
