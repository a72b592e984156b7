import { Hono } from 'hono';
import { z } from 'zod';
import { CONVERSATION_STATUSES } from '../../spec/index.js';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { contactIn } from '../domain/contacts.js';
import { applyConversationPatch, ConversationPatch } from '../domain/conversation-patch.js';
import { phoneUse } from '../domain/phone-use.js';
import { addConversation, liveThread } from '../domain/records.js';
import { channelIn, contactIdIn } from '../domain/refs.js';
import { invalid } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { newestFirst, paginate, perPage } from '../pagination.js';
import type { Conversation, ConversationStatus } from '../types.js';
import { body, intParam, recordAt, strictBody } from '../validation.js';
import { conversationView } from '../views/conversations.js';

const STATUSES: readonly ConversationStatus[] = CONVERSATION_STATUSES;
const OpenBody = strictBody({
  contact: z.union([z.number().int(), z.string().min(1)], { error: 'is required: a contact id or identifier' }),
  channel_id: z.number({ error: 'is required: a channel id' }).int(),
});

/** Conversations and closing notes (spec: Conversations). */
export function conversationRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  const { state, emitter } = deps;

  app.get('/conversations', guard(deps, 'conversations:read'), (c) => {
    const auth = caller(c);
    const q = c.req.query();
    if (q.status && !STATUSES.includes(q.status as ConversationStatus)) throw invalid('status', `must be one of ${STATUSES.join(', ')}`);
    const ws = auth.workspace;
    const contactId = intParam(q.contact_id, 'contact_id');
    if (contactId !== undefined) contactIdIn(ws, contactId, 'contact_id');
    const channelId = intParam(q.channel_id, 'channel_id');
    if (channelId !== undefined) channelIn(ws, channelId, 'channel_id');
    const rows = [...auth.workspace.conversations.values()].filter(
      (x) =>
        (!q.status || x.status === q.status) &&
        (contactId === undefined || x.contactId === contactId) &&
        (channelId === undefined || x.channelId === channelId),
    );
    return c.json(
      paginate(rows, newestFirst, (x) => conversationView(auth.workspace, x), { perPage: perPage(q.per_page), cursor: q.cursor }),
    );
  });

  // Spec: a contact has at most one live thread per channel; opening answers 201 when a thread
  // is created and 200 with the live thread (nothing created) when one exists.
  app.post('/conversations', guard(deps, 'conversations:write', phoneUse.bodyContacts('contact')), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const b = await body(c, OpenBody);
    const contact = contactIn(ws, auth, b.contact, 'contact');
    channelIn(ws, b.channel_id, 'channel_id');
    const live = liveThread(ws, contact.id, b.channel_id);
    if (live) return c.json({ data: conversationView(ws, live) }, 200);
    const conversation = addConversation(ws, state.ids.take(), state.now(), { contactId: contact.id, channelId: b.channel_id });
    emitter.emit('conversation.created', conversationView(ws, conversation), ws.id);
    return c.json({ data: conversationView(ws, conversation) }, 201);
  });

  app.get('/conversations/:id', guard(deps, 'conversations:read'), (c) => {
    const auth = caller(c);
    return c.json({ data: conversationView(auth.workspace, conversationAt(auth.workspace.conversations, c.req.param('id'))) });
  });

  app.patch('/conversations/:id', guard(deps, 'conversations:write'), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const conversation = conversationAt(ws.conversations, c.req.param('id'));
    const patch = await body(c, ConversationPatch);
    const events = applyConversationPatch(ws, conversation, patch, state.now());
    for (const event of events) emitter.emit(event, conversationView(ws, conversation), ws.id);
    return c.json({ data: conversationView(ws, conversation) });
  });

  // Spec: closing notes in the workspace's own order; may be empty.
  app.get('/closing-notes', guard(deps, 'conversations:read'), (c) => {
    const auth = caller(c);
    return c.json({ data: auth.workspace.closingNotes.map((n) => ({ ...n })) });
  });
  return app;
}

/** A conversation of the workspace by path id, or 404 (other workspaces' threads included). */
export function conversationAt(conversations: Map<number, Conversation>, raw: string): Conversation {
  return recordAt(conversations, raw, 'Conversation');
}
