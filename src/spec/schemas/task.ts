import { z } from 'zod';
import { Id, Timestamp } from './common.js';

/** Task; `type` and `status` are open strings (`call`, `open`, `done` are the values seen). */
export const Task = z.looseObject({
  id: Id,
  title: z.string(),
  description: z.string().nullable(),
  type: z.string(),
  status: z.string(),
  due_at: Timestamp,
  completed_at: Timestamp.nullable(),
  assignee_id: Id,
  created_by: Id,
  contact_id: Id.nullable(),
});
export type Task = z.infer<typeof Task>;
