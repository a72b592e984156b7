import { Hono } from 'hono';
import { z } from 'zod';
import { LEAD_OUTCOMES } from '../../spec/index.js';
import type { Deps } from '../context.js';
import { invalid, notFound } from '../errors.js';
import { body } from '../validation.js';
import { conversationView } from '../views/conversations.js';
import { leadView } from '../views/work.js';
import { chosenWorkspace, queriedWorkspace, WorkspaceRef } from './choose.js';
import { InboundBody, receiveInbound } from './inbound.js';

const Outcome = z.object({ outcome: z.enum(LEAD_OUTCOMES) });
const Redeliver = z.object({ ids: z.array(z.string().min(1)).optional(), workspace: WorkspaceRef.optional() });
/** Events are HTTP POSTs, so only an absolute http(s) URL can receive them (`javascript:`, `ftp:`… are refused, 422). */
const WebhookUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL, e.g. http://127.0.0.1:3000/webhooks' });
const Webhook = z.object({
  url: WebhookUrl.nullable(),
  secret: z.string().min(1).nullable().optional(),
  workspace: WorkspaceRef.optional(),
});

/** Hooks that act in the world: customer messages, lead outcomes, events and their deliveries. */
export function worldHooks(deps: Deps): Hono {
  const app = new Hono();
  const { state, emitter } = deps;

  app.post('/inbound', async (c) => {
    const b = await body(c, InboundBody);
    const ws = b.workspace_id !== undefined ? chosenWorkspace(state, b.workspace_id, 'workspace_id') : chosenWorkspace(state, b.workspace);
    const { conversation, message } = receiveInbound(deps, ws, b);
    return c.json({ data: { conversation: conversationView(ws, conversation), message } }, 201);
  });

  // No API call wins or loses a lead (spec: older overview); this hook does, emitting lead.won / lead.lost.
  app.post('/leads/:id/outcome', async (c) => {
    const { outcome } = await body(c, Outcome);
    const id = Number(c.req.param('id'));
    const ws = [...state.workspaces.values()].find((w) => w.leads.has(id));
    const lead = ws?.leads.get(id);
    if (!ws || !lead) throw notFound('Lead');
    const changed = lead.outcome !== outcome;
    lead.outcome = outcome;
    if (changed && outcome !== 'open') emitter.emit(outcome === 'won' ? 'lead.won' : 'lead.lost', leadView(lead), ws.id);
    return c.json({ data: leadView(lead) });
  });

  // ?workspace= keeps to one workspace's events (by key or id); without it, every workspace's.
  app.get('/events', (c) => c.json({ data: emitter.events(queriedWorkspace(state, c.req.query('workspace'))?.id) }));
  app.get('/deliveries', (c) => c.json({ data: emitter.deliveries(queriedWorkspace(state, c.req.query('workspace'))?.id) }));
  // A late retry of lost events (same ids, same bytes), each to its workspace's URL: what reconcile must survive.
  app.post('/events/redeliver', async (c) => {
    const b = await body(c, Redeliver);
    const ws = b.workspace === undefined ? undefined : chosenWorkspace(state, b.workspace);
    const targets = ws ? [ws.id] : [...state.workspaces.keys()];
    if (!targets.some((id) => emitter.target(id).url)) {
      throw invalid('url', `no webhook URL is configured${ws ? ` for workspace ${ws.key}` : ''} (POST /_sandbox/webhook)`);
    }
    return c.json({ data: { queued: emitter.redeliver(b.ids, ws?.id) } });
  });
  app.delete('/events', (c) => {
    emitter.clear();
    return c.body(null, 204);
  });

  // One workspace's target (?workspace=, default the first); /webhooks lists every workspace's.
  app.get('/webhook', (c) => {
    const ws = chosenWorkspace(state, c.req.query('workspace') || undefined);
    return c.json({ data: { ...emitter.target(ws.id), workspace: ws.key } });
  });
  app.get('/webhooks', (c) =>
    c.json({ data: [...state.workspaces.values()].map((ws) => ({ workspace: ws.key, workspace_id: ws.id, ...emitter.target(ws.id) })) }),
  );
  app.post('/webhook', async (c) => {
    const b = await body(c, Webhook);
    if (b.url && !b.secret) throw invalid('secret', 'is required with a url');
    const ws = chosenWorkspace(state, b.workspace);
    emitter.configure(b.url, b.secret ?? null, ws.id);
    return c.json({ data: { ...emitter.target(ws.id), workspace: ws.key } });
  });
  return app;
}
