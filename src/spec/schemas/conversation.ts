import { z } from 'zod';
import { ASSIGNEE_TYPES, CONVERSATION_STATUSES } from '../index.js';
import { Id, Timestamp } from './common.js';

export const ConversationStatus = z.enum(CONVERSATION_STATUSES);
export type ConversationStatus = z.infer<typeof ConversationStatus>;

export const Assignee = z.looseObject({ type: z.enum(ASSIGNEE_TYPES), id: Id });
export type Assignee = z.infer<typeof Assignee>;

export const Conversation = z.looseObject({
  id: Id,
  contact_id: Id,
  channel: z.looseObject({ id: Id, name: z.string(), type: z.string() }),
  status: ConversationStatus,
  subject: z.string().nullable(),
  assignee: Assignee.nullable(),
  last_message_at: Timestamp,
  closed_at: Timestamp.nullable(),
  created_at: Timestamp,
});
export type Conversation = z.infer<typeof Conversation>;

export const ClosingNote = z.looseObject({ category: z.string(), description: z.string() });
export type ClosingNote = z.infer<typeof ClosingNote>;
