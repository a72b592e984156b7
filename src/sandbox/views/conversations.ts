import { iso, isoOrNull } from '../clock.js';
import type { Conversation, Message, Workspace } from '../types.js';

/** Conversation as the API answers it (team and priority are kept but not shown: spec leaves it open). */
export function conversationView(ws: Workspace, c: Conversation): Record<string, unknown> {
  const channel = ws.channels.find((ch) => ch.id === c.channelId);
  return {
    id: c.id,
    contact_id: c.contactId,
    channel: channel ? { id: channel.id, name: channel.name, type: channel.type } : { id: c.channelId, name: '', type: 'unknown' },
    status: c.status,
    subject: c.subject,
    assignee: c.assignee ? { ...c.assignee } : null,
    last_message_at: iso(c.lastMessageAt),
    closed_at: isoOrNull(c.closedAt),
    created_at: iso(c.createdAt),
  };
}

/** Message as the API answers it; kind-specific details (url, buttons, template) ride along as extra fields. */
export function messageView(m: Message): Record<string, unknown> {
  return {
    id: m.id,
    conversation_id: m.conversationId,
    type: m.type,
    direction: m.direction,
    sender_type: m.senderType,
    user_id: m.userId,
    body: m.body,
    content_type: m.contentType,
    status: m.status,
    created_at: iso(m.createdAt),
    ...m.extra,
  };
}
