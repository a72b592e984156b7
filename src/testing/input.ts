import type { EventName, WorkspaceEvent } from '../events/index.js';
import { loadFixture, type Delivery } from './delivery.js';

/**
 * What testHandler runs a handler on: an event (createEvent, toEvent), a
 * delivery (loadFixture, readDelivery: its exact bytes), or the name of an
 * event (the package's fixture of it).
 */
export type HandlerInput<N extends EventName = EventName> = WorkspaceEvent<N> | Delivery | N;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * The delivery of an input. An event becomes the canonical envelope
 * `{id, event, created_at, data}`, so its key is its id (or, without one,
 * the hash of that body) as for a delivery the receiver took.
 */
export async function deliveryOf(input: unknown): Promise<Delivery> {
  // Checked at run time too: JavaScript callers and casts get a clear error.
  if (typeof input === 'string') return loadFixture(input as EventName);
  if (isObject(input) && input['bytes'] instanceof Uint8Array && typeof input['source'] === 'string') return input as unknown as Delivery;
  if (isObject(input) && typeof input['name'] === 'string' && 'data' in input) {
    const e = input as unknown as WorkspaceEvent;
    const bytes = Buffer.from(JSON.stringify({ id: e.id ?? null, event: e.name, created_at: e.createdAt ?? null, data: e.data }), 'utf8');
    return { source: `the "${e.name}" event`, bytes, headers: {}, receivedAt: undefined };
  }
  throw new TypeError(
    'testHandler: expected an event (createEvent, toEvent), a Delivery (loadFixture, readDelivery) or an event name as the input',
  );
}
