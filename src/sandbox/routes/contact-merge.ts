import { Hono } from 'hono';
import { z } from 'zod';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { contactIn } from '../domain/contacts.js';
import { phoneUse } from '../domain/phone-use.js';
import { invalid } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { body, strictBody } from '../validation.js';
import { contactView } from '../views/contacts.js';

const Side = z.union([z.number().int(), z.string().min(1)], { error: 'is required: a contact id or identifier' });
const MergeBody = strictBody({ survivor: Side, loser: Side });

/**
 * Spec, POST /contacts/merge (needs contacts:delete): both sides required, no
 * default survivor. The loser's conversations, deals, orders, tasks, leads
 * and labels move to the survivor; on a clash the survivor's value wins and
 * gaps are filled from the loser; the loser is removed.
 */
export function contactMergeRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  app.post('/contacts/merge', guard(deps, 'contacts:delete', phoneUse.bodyContacts('survivor', 'loser')), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const b = await body(c, MergeBody);
    const survivor = contactIn(ws, auth, b.survivor, 'survivor');
    const loser = contactIn(ws, auth, b.loser, 'loser');
    if (survivor.id === loser.id) throw invalid('loser', 'must be a different contact from the survivor');
    for (const cv of ws.conversations.values()) if (cv.contactId === loser.id) cv.contactId = survivor.id;
    for (const d of ws.deals.values()) {
      if (d.contactIds.includes(loser.id)) d.contactIds = [...new Set(d.contactIds.map((id) => (id === loser.id ? survivor.id : id)))];
    }
    for (const o of ws.orders.values()) if (o.contactId === loser.id) o.contactId = survivor.id;
    for (const t of ws.tasks.values()) if (t.contactId === loser.id) t.contactId = survivor.id;
    for (const l of ws.leads.values()) if (l.contactId === loser.id) l.contactId = survivor.id;
    survivor.labelIds = [...new Set([...survivor.labelIds, ...loser.labelIds])];
    survivor.email ??= loser.email;
    survivor.phone ??= loser.phone;
    survivor.language ??= loser.language;
    survivor.lastSeenAt = Math.max(survivor.lastSeenAt ?? 0, loser.lastSeenAt ?? 0) || null;
    survivor.updatedAt = deps.state.now();
    ws.contacts.delete(loser.id);
    return c.json({ data: contactView(ws, survivor) });
  });
  return app;
}
