import { z } from 'zod';
import { MAX_CHARS } from '../../spec/index.js';
import type { Deps } from '../context.js';
import { contactIn, parseAddress, findByAddress } from '../domain/contacts.js';
import { emitCreated } from '../domain/contact-write.js';
import { commentId } from '../domain/outbound.js';
import { addContact, addConversation, addMessage, liveThread } from '../domain/records.js';
import { invalid } from '../errors.js';
import { WorkspaceRef } from './choose.js';
import type { Contact, Conversation, Workspace } from '../types.js';
import { conversationView, messageView } from '../views/conversations.js';

/** Body of `POST /_sandbox/inbound`: a customer writes, on a thread or to a channel. */
export const InboundBody = z
  .object({
    /** The workspace written in, by key or id (default: the first). */
    workspace: WorkspaceRef.optional(),
    workspace_id: z.number().int().optional(),
    conversation_id: z.number().int().optional(),
    contact: z
      .union([
        z.number().int(),
        z.string().min(1),
        z.object({
          name: z.string().min(1).max(MAX_CHARS.contactName),
          email: z.email().nullable().optional(),
          phone: z.string().max(MAX_CHARS.contactPhone).nullable().optional(),
        }),
      ])
      .optional(),
    channel_id: z.number().int().optional(),
    body: z.string().min(1).max(MAX_CHARS.messageText),
  })
  .refine((b) => b.workspace === undefined || b.workspace_id === undefined, {
    message: 'send workspace or workspace_id, not both',
    path: ['workspace'],
  })
  .refine((b) => b.conversation_id !== undefined || (b.contact !== undefined && b.channel_id !== undefined), {
    message: 'send conversation_id, or contact and channel_id',
    path: ['conversation_id'],
  });
export type InboundBody = z.infer<typeof InboundBody>;

const VIEWER = { teammate: { viewPhone: true } };

function contactFor(deps: Deps, ws: Workspace, ref: NonNullable<InboundBody['contact']>): Contact {
  if (typeof ref !== 'object') return contactIn(ws, VIEWER, ref, 'contact');
  const byEmail = ref.email ? findByAddress(ws, VIEWER, { kind: 'email', email: ref.email }) : undefined;
  const found = byEmail ?? (ref.phone ? findByAddress(ws, VIEWER, parseAddress(`phone:${ref.phone}`)!) : undefined);
  if (found) return found;
  const contact = addContact(ws, deps.state.ids.take(), deps.state.now(), {
    name: ref.name,
    email: ref.email ?? null,
    phone: ref.phone ?? null,
  });
  emitCreated(deps, ws, contact);
  return contact;
}

/**
 * Simulates a customer message (spec: message.received). Creates the contact
 * (from an object) and the live thread when needed; a message on a closed,
 * pending or snoozed thread reopens it (`conversation.opened`), unless another
 * live thread exists for the contact and channel, which then receives it. On
 * a public comment thread the message is a comment and carries a
 * `comment_id`, the value a reply's `reply_to` names.
 */
export function receiveInbound(
  deps: Deps,
  ws: Workspace,
  b: InboundBody,
): { conversation: Conversation; message: ReturnType<typeof messageView> } {
  const { state, emitter } = deps;
  const now = state.now();
  let conversation: Conversation | undefined;
  if (b.conversation_id !== undefined) {
    conversation = ws.conversations.get(b.conversation_id);
    if (!conversation) throw invalid('conversation_id', 'does not name a conversation of this workspace');
  } else {
    if (!ws.channels.some((ch) => ch.id === b.channel_id)) throw invalid('channel_id', 'does not name a channel of this workspace');
    const contact = contactFor(deps, ws, b.contact!);
    conversation = liveThread(ws, contact.id, b.channel_id!);
    if (!conversation) {
      conversation = addConversation(ws, state.ids.take(), now, { contactId: contact.id, channelId: b.channel_id! });
      emitter.emit('conversation.created', conversationView(ws, conversation), ws.id);
    }
  }
  if (conversation.status !== 'open') {
    const live = conversation.status === 'closed' ? liveThread(ws, conversation.contactId, conversation.channelId) : undefined;
    if (live) conversation = live;
    if (conversation.status !== 'open') {
      Object.assign(conversation, { status: 'open', closedAt: null, snoozedUntil: null });
      emitter.emit('conversation.opened', conversationView(ws, conversation), ws.id);
    }
  }
  const id = state.ids.take();
  const isComment = ws.channels.find((ch) => ch.id === conversation.channelId)?.public ?? false;
  const message = addMessage(ws, id, now, {
    conversationId: conversation.id,
    direction: 'inbound',
    senderType: 'contact',
    userId: null,
    body: b.body,
    status: null,
    extra: isComment ? { comment_id: commentId(id) } : {},
  });
  const view = messageView(message);
  emitter.emit('message.received', view, ws.id);
  return { conversation, message: view };
}
