import { Hono } from 'hono';
import { z } from 'zod';
import { LEAD_OUTCOMES } from '../../spec/index.js';
import type { Deps } from '../context.js';
import { invalid, notFound } from '../errors.js';
import { body } from '../validation.js';
import { conversationView } from '../views/conversations.js';
import { leadView } from '../views/work.js';
import { InboundBody, receiveInbound } from './inbound.js';

const Outcome = z.object({ outcome: z.enum(LEAD_OUTCOMES) });
const Redeliver = z.object({ ids: z.array(z.string().min(1)).optional() });
/** Events are HTTP POSTs, so only an absolute http(s) URL can receive them (`javascript:`, `ftp:`… are refused, 422). */
const WebhookUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL, e.g. http://127.0.0.1:3000/webhooks' });
const Webhook = z.object({ url: WebhookUrl.nullable(), secret: z.string().min(1).nullable().optional() });

/** Hooks that act in the world: customer messages, lead outcomes, events and their deliveries. */
export function worldHooks(deps: Deps): Hono {
  const app = new Hono();
  const { state, emitter } = deps;

  app.post('/inbound', async (c) => {
    const b = await body(c, InboundBody);
    const ws = b.workspace_id !== undefined ? state.workspaces.get(b.workspace_id) : state.firstWorkspace();
    if (!ws) throw invalid('workspace_id', 'no such workspace');
    const { conversation, message } = receiveInbound(deps, ws, b);
    return c.json({ data: { conversation: conversationView(ws, conversation), message } }, 201);
  });

  // No API call wins or loses a lead (spec: older overview); this hook does, emitting lead.won / lead.lost.
  app.post('/leads/:id/outcome', async (c) => {
    const { outcome } = await body(c, Outcome);
    const id = Number(c.req.param('id'));
    const ws = [...state.workspaces.values()].find((w) => w.leads.has(id));
    const lead = ws?.leads.get(id);
    if (!lead) throw notFound('Lead');
    const changed = lead.outcome !== outcome;
    lead.outcome = outcome;
    if (changed && outcome !== 'open') emitter.emit(outcome === 'won' ? 'lead.won' : 'lead.lost', leadView(lead));
    return c.json({ data: leadView(lead) });
  });

  app.get('/events', (c) => c.json({ data: emitter.events() }));
  app.get('/deliveries', (c) => c.json({ data: emitter.deliveries() }));
  // A late retry of lost events (same ids, same bytes): what reconcile must survive.
  app.post('/events/redeliver', async (c) => {
    const b = await body(c, Redeliver);
    if (!emitter.target().url) throw invalid('url', 'no webhook URL is configured (POST /_sandbox/webhook)');
    return c.json({ data: { queued: emitter.redeliver(b.ids) } });
  });
  app.delete('/events', (c) => {
    emitter.clear();
    return c.body(null, 204);
  });

  app.get('/webhook', (c) => c.json({ data: emitter.target() }));
  app.post('/webhook', async (c) => {
    const b = await body(c, Webhook);
    if (b.url && !b.secret) throw invalid('secret', 'is required with a url');
    emitter.configure(b.url, b.secret ?? null);
    return c.json({ data: emitter.target() });
  });
  return app;
}
