import { Hono } from 'hono';
import { z } from 'zod';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { contactAt, labelIn } from '../domain/contacts.js';
import { emitLifecycle } from '../domain/contact-write.js';
import { moveLifecycle, stageIn } from '../domain/lifecycle.js';
import { phoneUse } from '../domain/phone-use.js';
import { guard } from '../middleware/guard.js';
import { body, strictBody } from '../validation.js';
import { labelRefs, stageView } from '../views/contacts.js';

const LifecycleBody = strictBody({
  stage: z.union([z.number().int(), z.string().min(1)], { error: 'is required: a stage id or exact name' }),
});
const LabelsBody = strictBody({
  labels: z
    .array(z.union([z.number().int(), z.string().min(1)]), { error: 'is required: an array of label ids or names' })
    .min(1, 'must name at least one label'),
});

/** Lifecycle move and labels of a contact (spec: PUT lifecycle, labels endpoints). */
export function contactLifecycleRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  const { state } = deps;

  app.put('/contacts/:id/lifecycle', guard(deps, 'contacts:write', phoneUse.address), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const contact = contactAt(ws, auth, c.req.param('id'));
    const stage = stageIn(ws, (await body(c, LifecycleBody)).stage, 'stage');
    const move = moveLifecycle(ws, contact, stage, state.now());
    if (move.changed) emitLifecycle(deps, ws, contact.id, move.previous, move.lifecycle);
    return c.json({
      data: { contact_id: contact.id, previous: move.previous ? stageView(move.previous) : null, lifecycle: stageView(stage) },
    });
  });

  app.get('/contacts/:id/labels', guard(deps, 'contacts:read', phoneUse.address), (c) => {
    const auth = caller(c);
    return c.json({ data: labelRefs(auth.workspace, contactAt(auth.workspace, auth, c.req.param('id'))) });
  });

  // Spec: a label that does not exist fails the whole call (422) and labels are never created;
  // adding a label already present changes nothing.
  app.post('/contacts/:id/labels', guard(deps, 'contacts:write', phoneUse.address), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const contact = contactAt(ws, auth, c.req.param('id'));
    const refs = (await body(c, LabelsBody)).labels;
    const labels = refs.map((ref, i) => labelIn(ws, ref, `labels.${i}`));
    const before = contact.labelIds.length;
    contact.labelIds = [...new Set([...contact.labelIds, ...labels.map((l) => l.id)])];
    if (contact.labelIds.length !== before) contact.updatedAt = state.now();
    return c.json({ data: labelRefs(ws, contact) });
  });

  // Spec: removing a label the contact lacks is not an error; the label itself stays.
  app.delete('/contacts/:id/labels/:label', guard(deps, 'contacts:write', phoneUse.address), (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const contact = contactAt(ws, auth, c.req.param('id'));
    const label = labelIn(ws, c.req.param('label'), 'label');
    if (contact.labelIds.includes(label.id)) {
      contact.labelIds = contact.labelIds.filter((id) => id !== label.id);
      contact.updatedAt = state.now();
    }
    return c.json({ data: labelRefs(ws, contact) });
  });
  return app;
}
