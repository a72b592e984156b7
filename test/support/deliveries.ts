import { randomUUID } from 'node:crypto';

/** A `message.received` delivery for conversation `conversationId` with a fresh id. */
export function messageReceived(conversationId: number, id = `evt_${randomUUID().replace(/-/g, '')}`): string {
  const at = new Date().toISOString();
  return JSON.stringify({
    id, event: 'message.received', created_at: at,
    data: { id: Math.floor(Math.random() * 1e9), conversation_id: conversationId, type: 'message', direction: 'inbound', sender_type: 'contact', user_id: null, body: 'hello', content_type: 'text', status: null, created_at: at },
  });
}

/** The envelope id of a delivery body (`messageReceived`, `eventBody` or any JSON envelope with an `id`). */
export function deliveryId(body: string): string {
  return (JSON.parse(body) as { id: string }).id;
}
