import { z } from 'zod';
import { Id, Timestamp } from './common.js';

export const LabelRef = z.looseObject({ id: Id, name: z.string() });
export type LabelRef = z.infer<typeof LabelRef>;

export const LifecycleStage = z.looseObject({
  id: Id,
  name: z.string(),
  role: z.string().nullable(),
  outcome: z.string().nullable(),
});
export type LifecycleStage = z.infer<typeof LifecycleStage>;

/** Contact as the API returns it (extra fields tolerated; phone may be masked). */
export const Contact = z.looseObject({
  id: Id,
  name: z.string(),
  phone: z.string().nullable(),
  email: z.string().nullable(),
  lifecycle_stage_id: Id.nullable(),
  blocked: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Contact = z.infer<typeof Contact>;

/** Answer of `PUT /contacts/{id}/lifecycle`; also the data of `contact.lifecycle_changed`. */
export const ContactLifecycle = z.looseObject({
  contact_id: Id,
  previous: LifecycleStage.nullable(),
  lifecycle: LifecycleStage,
});
export type ContactLifecycle = z.infer<typeof ContactLifecycle>;
