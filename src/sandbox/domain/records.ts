import type { Contact, Conversation, Message, Workspace } from '../types.js';

/** A workspace's default lifecycle stage (spec: a contact starts on it at creation). */
export function defaultStage(ws: Workspace): number {
  const stage = ws.stages.find((s) => s.role === 'default') ?? ws.stages[0];
  if (!stage) throw new Error(`workspace ${ws.id} has no lifecycle stage`);
  return stage.id;
}

/** A new contact on the default stage, stored in the workspace. */
export function addContact(ws: Workspace, id: number, now: number, fields: Partial<Omit<Contact, 'id'>> & { name: string }): Contact {
  const contact: Contact = {
    id,
    email: null,
    phone: null,
    lifecycleStageId: defaultStage(ws),
    blocked: false,
    labelIds: [],
    language: null,
    lastSeenAt: null,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
  ws.contacts.set(id, contact);
  return contact;
}

/** A new open conversation, stored in the workspace. */
export function addConversation(
  ws: Workspace,
  id: number,
  now: number,
  fields: Partial<Omit<Conversation, 'id'>> & { contactId: number; channelId: number },
): Conversation {
  const conversation: Conversation = {
    id,
    status: 'open',
    subject: null,
    assignee: null,
    teamId: null,
    priority: 'normal',
    summary: null,
    closingCategory: null,
    snoozedUntil: null,
    lastMessageAt: now,
    lastInboundAt: null,
    closedAt: null,
    createdAt: now,
    ...fields,
  };
  ws.conversations.set(id, conversation);
  return conversation;
}

/** Stores a message and moves the thread's `last_message_at` (and the contact's last seen, when inbound). */
export function addMessage(
  ws: Workspace,
  id: number,
  now: number,
  fields: Partial<Omit<Message, 'id'>> & { conversationId: number; body: string },
): Message {
  const message: Message = {
    id,
    type: 'message',
    direction: 'outbound',
    senderType: 'user',
    userId: null,
    contentType: 'text',
    status: 'sent',
    createdAt: now,
    extra: {},
    ...fields,
  };
  ws.messages.set(id, message);
  const conversation = ws.conversations.get(message.conversationId);
  if (conversation && message.type === 'message') {
    conversation.lastMessageAt = Math.max(conversation.lastMessageAt, message.createdAt);
    if (message.direction === 'inbound') {
      conversation.lastInboundAt = message.createdAt;
      const contact = ws.contacts.get(conversation.contactId);
      if (contact) contact.lastSeenAt = message.createdAt;
    }
  }
  return message;
}

/** The thread that is not closed for a contact on a channel (spec: at most one live thread). */
export function liveThread(ws: Workspace, contactId: number, channelId: number): Conversation | undefined {
  for (const c of ws.conversations.values()) {
    if (c.contactId === contactId && c.channelId === channelId && c.status !== 'closed') return c;
  }
  return undefined;
}
