import { Hono } from 'hono';
import { z } from 'zod';
import { MAX_CHARS } from '../../spec/index.js';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { compose, outsideWindow, SendBody } from '../domain/outbound.js';
import { addMessage } from '../domain/records.js';
import { invalidMany, type FieldErrors } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { newestFirst, paginate, perPage } from '../pagination.js';
import { body, recordAt, strictBody, tooLong } from '../validation.js';
import { messageView } from '../views/conversations.js';
import { conversationAt } from './conversations.js';

const NoteBody = strictBody({
  body: z.string({ error: 'is required' }).min(1, 'is required').max(MAX_CHARS.noteBody, tooLong(MAX_CHARS.noteBody)),
  mentions: z.array(z.number().int()).optional(),
});

/** Messages of a thread, sending, notes and single messages (spec: Messages). */
export function messageRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  const { state, emitter } = deps;

  app.get('/conversations/:id/messages', guard(deps, 'conversations:read'), (c) => {
    const auth = caller(c);
    const cv = conversationAt(auth.workspace.conversations, c.req.param('id'));
    const rows = [...auth.workspace.messages.values()].filter((m) => m.conversationId === cv.id);
    return c.json(paginate(rows, newestFirst, messageView, { perPage: perPage(c.req.query('per_page')), cursor: c.req.query('cursor') }));
  });

  // Spec: a real send attributed to the token's teammate. Outside the 24-hour window a free-form
  // message comes back as a failed message (201, status failed); `message.sent` fires for sent ones.
  app.post('/conversations/:id/messages', guard(deps, 'messages:send'), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const cv = conversationAt(ws.conversations, c.req.param('id'));
    const b = await body(c, SendBody);
    const channel = ws.channels.find((ch) => ch.id === cv.channelId)!;
    const composed = compose(ws, cv, channel, b);
    const now = state.now();
    const failed = composed.contentType !== 'template' && outsideWindow(cv, channel, now);
    const message = addMessage(ws, state.ids.take(), now, {
      conversationId: cv.id,
      direction: 'outbound',
      senderType: 'user',
      userId: auth.teammate.id,
      body: composed.body,
      contentType: composed.contentType,
      status: failed ? 'failed' : 'sent',
      extra: failed ? { ...composed.extra, error: 'outside_customer_service_window' } : composed.extra,
    });
    if (!failed) emitter.emit('message.sent', messageView(message), ws.id);
    return c.json({ data: messageView(message) }, 201);
  });

  // Spec: every mentioned id must be an active teammate of the workspace, else 422.
  app.post('/conversations/:id/notes', guard(deps, 'conversations:write'), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const cv = conversationAt(ws.conversations, c.req.param('id'));
    const b = await body(c, NoteBody);
    const errors: FieldErrors = {};
    (b.mentions ?? []).forEach((id, i) => {
      if (!ws.teammates.some((t) => t.id === id && t.active))
        errors[`mentions.${i}`] = [`${id} is not an active teammate of this workspace`];
    });
    if (Object.keys(errors).length) throw invalidMany(errors);
    const note = addMessage(ws, state.ids.take(), state.now(), {
      conversationId: cv.id,
      type: 'note',
      direction: null,
      senderType: 'user',
      userId: auth.teammate.id,
      body: b.body,
      status: null,
      extra: { mentions: [...(b.mentions ?? [])] },
    });
    return c.json({ data: messageView(note) }, 201);
  });

  app.get('/messages/:id', guard(deps, 'conversations:read'), (c) => {
    const auth = caller(c);
    const message = recordAt(auth.workspace.messages, c.req.param('id'), 'Message');
    return c.json({ data: messageView(message) });
  });
  return app;
}
