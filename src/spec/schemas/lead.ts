import { z } from 'zod';
import { LEAD_OUTCOMES } from '../index.js';
import { Id } from './common.js';

/**
 * Lead of the older overview endpoints. The spec does not show its fields;
 * our event contract fixes `{id, contact_id, name, value?, source?, outcome?}` (see docs).
 * `value` is a decimal string in responses, like every amount.
 */
export const Lead = z.looseObject({
  id: Id,
  contact_id: Id,
  name: z.string(),
  value: z.string().nullable().optional(),
  source: z.string().nullable().optional(),
  outcome: z.enum(LEAD_OUTCOMES).nullable().optional(),
});
export type Lead = z.infer<typeof Lead>;
