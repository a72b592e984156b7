import { randomUUID } from 'node:crypto';

/**
 * The one builder of delivery bodies for tests: the JSON text a webhook POST
 * carries, `{ id, event, created_at, data }`. Every body has a fresh id unless
 * given one, so each call is a new delivery (send the same text twice for a
 * duplicate). The shorthands below only build the `data` of one kind of event.
 *
 * Handlers that take a typed event (a handler's own unit tests) use
 * `createEvent` of switchyard/testing instead: it builds from the shipped
 * fixtures and derives the id from the content, so two equal events are one
 * delivery, which is not what tests that send many deliveries want.
 */

/** A fresh envelope id: `evt_` and 32 hex digits. */
export const newEventId = (): string => `evt_${randomUUID().replace(/-/g, '')}`;
const iso = (ms: number) => new Date(ms).toISOString();

export interface BodyOptions {
  /** Envelope id (default: a fresh one). */
  readonly id?: string;
  /** The envelope's `created_at` (default: now). */
  readonly createdMs?: number;
}

/**
 * A body of `event` with `data`. Without `data`, the data of an inbound message
 * in conversation 1 with text `hi`, whatever the event: enough for tests of the
 * receiver and the queue, which check the envelope and not the data.
 */
export function eventBody(
  event = 'message.received',
  data?: object,
  { id = newEventId(), createdMs = Date.now() }: BodyOptions = {},
): string {
  return JSON.stringify({ id, event, created_at: iso(createdMs), data: data ?? messageData('message.received', 1, 'hi', createdMs) });
}

/**
 * Message ids: counted up from a random start, so ids made in one process never
 * repeat. A message's change key is its event and id (src/events/change-key.ts):
 * two random ids that met (a 5 % chance among 10 000 drawn from 1e9) made two
 * distinct deliveries one change, and the second was rightly never run.
 */
let lastMessageId = Math.floor(Math.random() * 1e9);

/** The data of a message.received (inbound, from the contact) or message.sent (outbound, by a user) in conversation `conv`. */
export function messageData(event: 'message.received' | 'message.sent', conv: number, body: string, createdMs = Date.now()): object {
  const inbound = event === 'message.received';
  return {
    id: ++lastMessageId,
    conversation_id: conv,
    type: 'message',
    direction: inbound ? 'inbound' : 'outbound',
    sender_type: inbound ? 'contact' : 'user',
    user_id: null,
    body,
    content_type: 'text',
    status: null,
    created_at: iso(createdMs),
  };
}

/** A message event in conversation `conv` whose text is `body` (the flow fixtures read it as a sequence number, others as what to do). */
export function messageBody(event: 'message.received' | 'message.sent', conv: number, body = 'hello', createdMs = Date.now()): string {
  return eventBody(event, messageData(event, conv, body, createdMs), { createdMs });
}

/** A conversation.* event: the conversation record, created a minute before the event. */
export function conversationBody(event: string, conv: number, subject: string | null, createdMs = Date.now()): string {
  return eventBody(
    event,
    {
      id: conv,
      contact_id: 7,
      channel: { id: 1, name: 'WhatsApp', type: 'whatsapp' },
      status: 'open',
      subject,
      assignee: { type: 'user', id: 21 },
      last_message_at: iso(createdMs),
      closed_at: null,
      created_at: iso(createdMs - 60_000),
    },
    { createdMs },
  );
}

/** A contact.lifecycle_changed event: `contact` moved to `stage`. */
export function lifecycleBody(contact: number, stage: string, createdMs = Date.now()): string {
  return eventBody(
    'contact.lifecycle_changed',
    { contact_id: contact, previous: null, lifecycle: { id: 6, name: stage, role: null, outcome: null } },
    { createdMs },
  );
}

/** The envelope id of a delivery body (any JSON envelope with an `id`). */
export function deliveryId(body: string): string {
  return (JSON.parse(body) as { id: string }).id;
}
