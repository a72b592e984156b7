import { Hono } from 'hono';
import { caller, type AuthInfo, type Ctx, type Deps, type SandboxEnv } from '../context.js';
import { contactAt, findByAddress, labelIn, parseAddress, phoneKey, type ContactAddress } from '../domain/contacts.js';
import { applyFields, emitCreated, NewContact, ContactFields, checkAddress, precheck, requestedStage } from '../domain/contact-write.js';
import { stageIn } from '../domain/lifecycle.js';
import { phoneUse } from '../domain/phone-use.js';
import { addContact, defaultStage } from '../domain/records.js';
import { notFound, invalid } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { newestFirst, paginate, perPage } from '../pagination.js';
import type { Contact } from '../types.js';
import { body, intParam, timeParam } from '../validation.js';
import { contactView, parseInclude } from '../views/contacts.js';

/**
 * PUT makes the contact at the address match the body, so the body may not
 * move the contact away from its own address: an `email:` PUT whose `email`
 * differs (or a `phone:` PUT whose `phone` differs) would leave nothing at the
 * address, and the next identical PUT would create another contact. PUT is
 * idempotent, so that is a 422 (our choice: not shown).
 */
function keepsAddress(address: ContactAddress, fields: ContactFields): void {
  if (address.kind === 'email' && fields.email !== undefined && fields.email?.toLowerCase() !== address.email.toLowerCase()) {
    throw invalid('email', `must be ${address.email} (the address of this PUT) or left out`);
  }
  if (
    address.kind === 'phone' &&
    fields.phone !== undefined &&
    (fields.phone === null || phoneKey(fields.phone) !== phoneKey(address.phone))
  ) {
    throw invalid('phone', `must be the number of the address (${address.phone}) or left out`);
  }
}

/** Contacts CRUD and list (spec: Contacts). */
export function contactRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  const { state } = deps;

  app.get('/contacts', guard(deps, 'contacts:read', phoneUse.filter), listContacts);

  app.post('/contacts', guard(deps, 'contacts:write', phoneUse.contactWrite), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const fields = await body(c, NewContact);
    precheck(ws, fields);
    const now = state.now();
    const contact = addContact(ws, state.ids.take(), now, {
      name: fields.name,
      email: fields.email ?? null,
      phone: fields.phone ?? null,
      lifecycleStageId: requestedStage(ws, fields)?.id ?? defaultStage(ws),
    });
    emitCreated(deps, ws, contact);
    return c.json({ data: contactView(ws, contact) }, 201);
  });

  app.get('/contacts/:id', guard(deps, 'contacts:read', phoneUse.address), (c) => {
    const auth = caller(c);
    const contact = contactAt(auth.workspace, auth, c.req.param('id'));
    const include = parseInclude(c.req.query('include'));
    return c.json({ data: contactView(auth.workspace, contact, { include }) });
  });

  app.patch('/contacts/:id', guard(deps, 'contacts:write', phoneUse.contactWrite), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const contact = contactAt(ws, auth, c.req.param('id'));
    const fields = await body(c, ContactFields);
    precheck(ws, fields);
    applyFields(deps, ws, contact, fields, state.now());
    return c.json({ data: contactView(ws, contact) });
  });

  app.put('/contacts/:id', guard(deps, 'contacts:write', phoneUse.contactWrite), (c) => upsertContact(deps, c, c.req.param('id')));

  // Spec: DELETE removes the contact; its conversations stay in the record.
  app.delete('/contacts/:id', guard(deps, 'contacts:delete', phoneUse.address), (c) => {
    const auth = caller(c);
    const contact = contactAt(auth.workspace, auth, c.req.param('id'));
    auth.workspace.contacts.delete(contact.id);
    return c.body(null, 204);
  });

  return app;
}

/** `GET /contacts`: every filter given must match. */
function listContacts(c: Ctx): Response {
  const auth = caller(c);
  const ws = auth.workspace;
  const q = c.req.query();
  const filters = contactFilters(auth, q);
  const include = parseInclude(q.include);
  const rows = [...ws.contacts.values()].filter((x) => filters.every((f) => f(x)));
  return c.json(paginate(rows, newestFirst, (x) => contactView(ws, x, { include }), { perPage: perPage(q.per_page), cursor: q.cursor }));
}

/** The filters of a `GET /contacts` query (a bad one is a 422). */
function contactFilters(auth: AuthInfo, q: Record<string, string>): ((x: Contact) => boolean)[] {
  const ws = auth.workspace;
  const filters: ((x: Contact) => boolean)[] = [];
  if (q.search) {
    const s = q.search.toLowerCase();
    // Spec: search matches name and email; phone only when the teammate may see phone numbers.
    filters.push(
      (x) =>
        x.name.toLowerCase().includes(s) ||
        (x.email?.toLowerCase().includes(s) ?? false) ||
        (auth.teammate.viewPhone && x.phone !== null && x.phone.replace(/\D/g, '').includes(s.replace(/\D/g, '') || '\u0000')),
    );
  }
  if (q.email) filters.push((x) => x.email?.toLowerCase() === q.email!.toLowerCase());
  if (q.phone !== undefined) {
    const key = phoneKey(q.phone);
    filters.push((x) => x.phone !== null && phoneKey(x.phone) === key);
  }
  if (q.label) {
    const label = labelIn(ws, q.label, 'label');
    filters.push((x) => x.labelIds.includes(label.id));
  }
  const stageId = intParam(q.lifecycle_stage_id, 'lifecycle_stage_id');
  if (stageId !== undefined) {
    const stage = stageIn(ws, stageId, 'lifecycle_stage_id');
    filters.push((x) => x.lifecycleStageId === stage.id);
  }
  const after = timeParam(q.created_after, 'created_after');
  if (after !== undefined) filters.push((x) => x.createdAt >= after);
  const before = timeParam(q.created_before, 'created_before', true);
  if (before !== undefined) filters.push((x) => x.createdAt <= before);
  const updated = timeParam(q.updated_after, 'updated_after');
  if (updated !== undefined) filters.push((x) => x.updatedAt >= updated);
  return filters;
}

/**
 * `PUT /contacts/:id` (spec): makes the contact at the address match the body, creating it
 * when none exists; `id:` never creates (an unissued id is 404). A created contact takes
 * the address's email/phone.
 */
async function upsertContact(deps: Deps, c: Ctx, raw: string): Promise<Response> {
  const { state } = deps;
  const auth = caller(c);
  const ws = auth.workspace;
  const address = parseAddress(raw);
  if (!address) throw notFound('Contact');
  checkAddress(address);
  const fields = await body(c, ContactFields);
  precheck(ws, fields);
  keepsAddress(address, fields);
  const now = state.now();
  const existing = findByAddress(ws, auth, address);
  if (existing) {
    applyFields(deps, ws, existing, fields, now);
    return c.json({ data: contactView(ws, existing) }, 200);
  }
  if (address.kind === 'id') throw notFound('Contact');
  if (!fields.name) throw invalid('name', 'is required to create a contact');
  const contact = addContact(ws, state.ids.take(), now, {
    name: fields.name,
    email: fields.email !== undefined ? fields.email : address.kind === 'email' ? address.email : null,
    phone: fields.phone !== undefined ? fields.phone : address.kind === 'phone' ? address.phone : null,
    lifecycleStageId: requestedStage(ws, fields)?.id ?? defaultStage(ws),
  });
  emitCreated(deps, ws, contact);
  return c.json({ data: contactView(ws, contact) }, 201);
}
