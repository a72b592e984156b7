import { z } from 'zod';
import { MAX_CHARS } from '../../spec/limits.js';
import { strictBody, tooLong } from '../validation.js';
import type { Deps } from '../context.js';
import type { Contact, LifecycleStage, Workspace } from '../types.js';
import { contactView, stageView } from '../views/contacts.js';
import { moveLifecycle, stageIn } from './lifecycle.js';
import { defaultStage } from './records.js';

/** Spec, POST /contacts body; limits from the Limits table (name 255, phone 32). */
const Name = z.string({ error: 'is required' }).trim().min(1, 'is required').max(MAX_CHARS.contactName, tooLong(MAX_CHARS.contactName));
export const ContactFields = strictBody({
  name: Name,
  email: z.email('must be a valid email address').nullable(),
  phone: z.string().max(MAX_CHARS.contactPhone, tooLong(MAX_CHARS.contactPhone)).nullable(),
  lifecycle_stage_id: z.number().int().nullable(),
}).partial();
export type ContactFields = z.infer<typeof ContactFields>;

/** Body of a create: `name` required. */
export const NewContact = ContactFields.extend({ name: Name });

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
    if (move.changed) emitLifecycle(deps, contact.id, move.previous, move.lifecycle);
  }
}

/** `contact.lifecycle_changed` carries a ContactLifecycle (the event contract's data per event). */
export function emitLifecycle(
  deps: Deps, contactId: number, previous: Parameters<typeof stageView>[0] | null, lifecycle: Parameters<typeof stageView>[0],
): void {
  deps.emitter.emit('contact.lifecycle_changed', {
    contact_id: contactId, previous: previous ? stageView(previous) : null, lifecycle: stageView(lifecycle),
  });
}

/** `contact.created` carries the Contact as the API returns it (unmasked: the workspace's own endpoint). */
export function emitCreated(deps: Deps, ws: Workspace, contact: Contact): void {
  deps.emitter.emit('contact.created', contactView(ws, contact));
}
