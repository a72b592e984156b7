import { z } from 'zod';
import { MAX_CHARS } from '../../spec/index.js';
import { strictBody, tooLong } from '../validation.js';
import { invalid } from '../errors.js';
import type { ContactAddress } from './contacts.js';
import type { Deps } from '../context.js';
import type { Contact, LifecycleStage, Workspace } from '../types.js';
import { contactView, stageView } from '../views/contacts.js';
import { moveLifecycle, stageIn } from './lifecycle.js';
import { defaultStage } from './records.js';

/** Spec, POST /contacts body; limits from the Limits table (name 255, phone 32). */
const Name = z.string({ error: 'is required' }).trim().min(1, 'is required').max(MAX_CHARS.contactName, tooLong(MAX_CHARS.contactName));
const Email = z.email('must be a valid email address');
/**
 * A phone number: at most 32 characters (spec), written with digits and the
 * usual `+ ( ) - .` and spaces, at least one digit (our reading: numbers are
 * matched on their last nine digits, which `abc` does not have).
 */
const Phone = z
  .string()
  .max(MAX_CHARS.contactPhone, tooLong(MAX_CHARS.contactPhone))
  .regex(/^[+\d\s().-]*\d[+\d\s().-]*$/, 'must be a phone number: digits, optionally with +, spaces, brackets, dots or dashes');
export const ContactFields = strictBody({
  name: Name,
  email: Email.nullable(),
  phone: Phone.nullable(),
  lifecycle_stage_id: z.number().int().nullable(),
}).partial();
export type ContactFields = z.infer<typeof ContactFields>;

/** Body of a create: `name` required. */
export const NewContact = ContactFields.extend({ name: Name });

/**
 * The address of a `PUT /contacts/email:…` or `phone:…` becomes the created
 * contact's email or phone, so it passes the same check as that field of
 * `POST /contacts` (422 naming the field and the address).
 */
export function checkAddress(address: ContactAddress): void {
  if (address.kind === 'id') return;
  const [schema, value] = address.kind === 'email' ? [Email, address.email] : [Phone, address.phone];
  const r = schema.safeParse(value);
  if (!r.success) throw invalid(address.kind, `${r.error.issues[0]!.message} (the address ${address.kind}:${value})`);
}

/**
 * Checks that hold before any write: `lifecycle_stage_id` must name a stage of
 * the workspace (422). Writing a phone needs the view-phone permission (403, a
 * masked number may not be replaced): the route's guard checks that before
 * anything else (domain/phone-use.ts).
 */
export function precheck(ws: Workspace, fields: ContactFields): void {
  if (fields.lifecycle_stage_id != null) stageIn(ws, fields.lifecycle_stage_id, 'lifecycle_stage_id');
}

/**
 * The stage a write asks for: `lifecycle_stage_id` is "int or null" (spec,
 * Contact) and a contact always sits on a stage, so null means the default
 * stage, the one a contact starts on (our reading); undefined means no change.
 */
export function requestedStage(ws: Workspace, fields: ContactFields): LifecycleStage | undefined {
  if (fields.lifecycle_stage_id === undefined) return undefined;
  if (fields.lifecycle_stage_id === null) return ws.stages.find((s) => s.id === defaultStage(ws))!;
  return stageIn(ws, fields.lifecycle_stage_id, 'lifecycle_stage_id');
}

/**
 * Applies the sent fields (only those sent change); a lifecycle change runs
 * the lifecycle rules and emits. `updated_at` moves only when a value did: a
 * repeated identical PUT or PATCH is no change for a poller (`updated_after`).
 */
export function applyFields(deps: Deps, ws: Workspace, contact: Contact, fields: ContactFields, now: number): void {
  const before = { name: contact.name, email: contact.email, phone: contact.phone };
  if (fields.name !== undefined) contact.name = fields.name;
  if (fields.email !== undefined) contact.email = fields.email;
  if (fields.phone !== undefined) contact.phone = fields.phone;
  if (contact.name !== before.name || contact.email !== before.email || contact.phone !== before.phone) contact.updatedAt = now;
  const stage = requestedStage(ws, fields);
  if (stage) {
    const move = moveLifecycle(ws, contact, stage, now);
    if (move.changed) emitLifecycle(deps, ws, contact.id, move.previous, move.lifecycle);
  }
}

/** `contact.lifecycle_changed` carries a ContactLifecycle (the event contract's data per event). */
export function emitLifecycle(
  deps: Deps,
  ws: Workspace,
  contactId: number,
  previous: Parameters<typeof stageView>[0] | null,
  lifecycle: Parameters<typeof stageView>[0],
): void {
  deps.emitter.emit(
    'contact.lifecycle_changed',
    {
      contact_id: contactId,
      previous: previous ? stageView(previous) : null,
      lifecycle: stageView(lifecycle),
    },
    ws.id,
  );
}

/** `contact.created` carries the Contact as the API returns it (unmasked: the workspace's own endpoint). */
export function emitCreated(deps: Deps, ws: Workspace, contact: Contact): void {
  deps.emitter.emit('contact.created', contactView(ws, contact), ws.id);
}
