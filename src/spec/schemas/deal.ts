import { z } from 'zod';
import { DEAL_STATUSES } from '../index.js';
import { DecimalString, Id, Timestamp } from './common.js';

export const DealStatus = z.enum(DEAL_STATUSES);
export type DealStatus = z.infer<typeof DealStatus>;

const Ref = z.looseObject({ id: Id, name: z.string() });

/** Deal; `amount` stays a decimal string. */
export const Deal = z.looseObject({
  id: Id,
  name: z.string(),
  pipeline: Ref,
  stage: Ref,
  status: DealStatus,
  amount: DecimalString,
  /** `YYYY-MM-DD`. */
  close_date: z.string().nullable(),
  owner_id: Id.nullable(),
  organization_id: Id.nullable(),
  source: z.string(),
  closed_at: Timestamp.nullable(),
  closed_lost_reason: z.string().nullable(),
  contact_ids: z.array(Id),
  created_at: Timestamp,
});
export type Deal = z.infer<typeof Deal>;
