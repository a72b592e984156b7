import { Hono } from 'hono';
import { z } from 'zod';
import { LEAD_OUTCOMES } from '../../spec/index.js';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { contactIdIn } from '../domain/refs.js';
import { invalid } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { Amount, toCents } from '../money.js';
import { newestFirst, paginate, perPage } from '../pagination.js';
import type { Lead } from '../types.js';
import { body, intParam, strictBody } from '../validation.js';
import { leadView } from '../views/work.js';

const NewLead = strictBody({
  contact_id: z.number({ error: 'is required' }).int(),
  name: z.string({ error: 'is required' }).trim().min(1, 'is required').max(255, 'may not be longer than 255 characters'),
  value: Amount.nullable().optional(),
  source: z.string().max(255).nullable().optional(),
});

/**
 * Leads of the older overview (spec: GET/POST /leads with leads:read and
 * leads:write). The list answers the same page shape as every collection.
 * Winning or losing a lead has no API call; the sandbox hook does it.
 */
export function leadRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  const { state, emitter } = deps;

  app.get('/leads', guard(deps, 'leads:read'), (c) => {
    const auth = caller(c);
    const q = c.req.query();
    if (q.outcome && !(LEAD_OUTCOMES as readonly string[]).includes(q.outcome))
      throw invalid('outcome', `must be one of ${LEAD_OUTCOMES.join(', ')}`);
    const contact = intParam(q.contact_id, 'contact_id');
    if (contact !== undefined) contactIdIn(auth.workspace, contact, 'contact_id');
    const rows = [...auth.workspace.leads.values()].filter(
      (l) => (!q.outcome || l.outcome === q.outcome) && (contact === undefined || l.contactId === contact),
    );
    return c.json(paginate(rows, newestFirst, leadView, { perPage: perPage(q.per_page), cursor: q.cursor }));
  });

  app.post('/leads', guard(deps, 'leads:write'), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const b = await body(c, NewLead);
    contactIdIn(ws, b.contact_id, 'contact_id');
    const lead: Lead = {
      id: state.ids.take(),
      contactId: b.contact_id,
      name: b.name,
      valueCents: b.value == null ? null : toCents(b.value),
      source: b.source ?? null,
      outcome: 'open',
      createdAt: state.now(),
    };
    ws.leads.set(lead.id, lead);
    emitter.emit('lead.created', leadView(lead), ws.id);
    return c.json({ data: leadView(lead) }, 201);
  });
  return app;
}
