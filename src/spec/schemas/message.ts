import { z } from 'zod';
import { MESSAGE_DIRECTIONS } from '../index.js';
import { Id, Timestamp } from './common.js';

export const Message = z.looseObject({
  id: Id,
  conversation_id: Id,
  type: z.string(),
  direction: z.enum(MESSAGE_DIRECTIONS).nullable(),
  sender_type: z.string(),
  user_id: Id.nullable(),
  body: z.string(),
  content_type: z.string(),
  status: z.string().nullable(),
  created_at: Timestamp,
});
export type Message = z.infer<typeof Message>;
