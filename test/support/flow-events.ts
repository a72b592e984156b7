import { randomUUID } from 'node:crypto';

const newId = () => `evt_${randomUUID().replace(/-/g, '')}`;
const iso = (ms: number) => new Date(ms).toISOString();

/** A signed-delivery body of `event` with `data`, created at `createdMs`. */
export function envelope(event: string, data: object, createdMs = Date.now(), id = newId()): string {
  return JSON.stringify({ id, event, created_at: iso(createdMs), data });
}

/** An inbound message of conversation `conv` whose body is `body` (the flow fixtures read it as a sequence number). */
export function message(event: 'message.received' | 'message.sent', conv: number, body: string, createdMs = Date.now()): string {
  return envelope(event, {
    id: Math.floor(Math.random() * 1e9), conversation_id: conv, type: 'message', direction: event === 'message.received' ? 'inbound' : 'outbound',
    sender_type: event === 'message.received' ? 'contact' : 'user', user_id: null, body, content_type: 'text', status: null, created_at: iso(createdMs),
  }, createdMs);
}

/** A conversation record as the conversation.* events carry it. */
export function conversation(event: string, conv: number, subject: string | null, createdMs = Date.now()): string {
  return envelope(event, {
    id: conv, contact_id: 7, channel: { id: 1, name: 'WhatsApp', type: 'whatsapp' }, status: 'open', subject, assignee: { type: 'user', id: 21 },
    last_message_at: iso(createdMs), closed_at: null, created_at: iso(createdMs - 60_000),
  }, createdMs);
}

/** A contact's lifecycle move to `stage`. */
export function lifecycle(contact: number, stage: string, createdMs = Date.now()): string {
  return envelope('contact.lifecycle_changed', {
    contact_id: contact, previous: null, lifecycle: { id: 6, name: stage, role: null, outcome: null },
  }, createdMs);
}
