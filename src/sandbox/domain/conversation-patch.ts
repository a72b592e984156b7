import { z } from 'zod';
import {
  ASSIGNEE_TYPES,
  CONVERSATION_PRIORITIES,
  CONVERSATION_STATUSES,
  MAX_CHARS,
  type WebhookEventName as EventName,
} from '../../spec/index.js';
import { strictBody, Timestamp, tooLong } from '../validation.js';
import { invalid, invalidMany } from '../errors.js';
import type { Conversation, Workspace } from '../types.js';
import { liveThread } from './records.js';
import { aiAgentIn, teamIn, teammateIn } from './refs.js';

/** Spec, PATCH /conversations/{id}: only keys sent are acted on. */
export const ConversationPatch = strictBody({
  status: z.enum(CONVERSATION_STATUSES).optional(),
  category: z.string().nullable().optional(),
  summary: z.string().max(MAX_CHARS.conversationSummary, tooLong(MAX_CHARS.conversationSummary)).nullable().optional(),
  snoozed_until: Timestamp.nullable().optional(),
  assignee: strictBody({ type: z.enum(ASSIGNEE_TYPES), id: z.number().int() })
    .nullable()
    .optional(),
  team_id: z.number().int().nullable().optional(),
  priority: z.enum(CONVERSATION_PRIORITIES).optional(),
});
export type ConversationPatch = z.infer<typeof ConversationPatch>;

/**
 * Validates and applies a PATCH; returns the events to emit, in order.
 * Rules (spec: Conversation status): `snoozed` needs a future `snoozed_until`;
 * `category` goes with `closed` and must be a closing-note category; a `user`
 * assignee must be an active teammate, an `ai` one an AI agent of the
 * workspace, and `team_id` one of its teams (422 otherwise). Every move is
 * allowed from any state (the table says "any"), except that reopening a
 * closed thread while another live thread exists for the contact and channel
 * is 422 (one live thread).
 */
export function applyConversationPatch(ws: Workspace, cv: Conversation, p: ConversationPatch, now: number): EventName[] {
  let snoozedUntil: number | null = null;
  if (p.status === 'snoozed') {
    if (!p.snoozed_until) throw invalid('snoozed_until', 'is required with status snoozed');
    snoozedUntil = Date.parse(p.snoozed_until);
    if (snoozedUntil <= now) throw invalid('snoozed_until', 'must be in the future');
  }
  if (p.category !== undefined && p.category !== null) {
    if (p.status !== 'closed') throw invalid('category', 'may only be sent with status closed');
    if (!ws.closingNotes.some((n) => n.category === p.category)) {
      throw invalid('category', `must be one of: ${ws.closingNotes.map((n) => n.category).join(', ') || '(none configured)'}`);
    }
  }
  if (p.assignee?.type === 'user') teammateIn(ws, p.assignee.id, 'assignee.id', { active: true });
  if (p.assignee?.type === 'ai') aiAgentIn(ws, p.assignee.id, 'assignee.id');
  if (p.team_id != null) teamIn(ws, p.team_id, 'team_id');
  if (p.status && p.status !== 'closed' && cv.status === 'closed') {
    const other = liveThread(ws, cv.contactId, cv.channelId);
    if (other && other.id !== cv.id) {
      throw invalidMany({ status: [`conversation ${other.id} is already live for this contact and channel`] });
    }
  }

  const events: EventName[] = [];
  if (p.status && p.status !== cv.status) {
    if (p.status === 'closed') events.push('conversation.closed');
    if (p.status === 'open') events.push('conversation.opened');
  }
  if (p.status) {
    cv.status = p.status;
    cv.snoozedUntil = p.status === 'snoozed' ? snoozedUntil : null;
    if (p.status === 'closed') {
      cv.closedAt = now;
      cv.closingCategory = p.category ?? null;
    } else {
      cv.closedAt = null;
    }
  }
  if (p.summary !== undefined) cv.summary = p.summary;
  if (p.team_id !== undefined) cv.teamId = p.team_id;
  if (p.priority !== undefined) cv.priority = p.priority;
  if (p.assignee !== undefined) {
    const changed = JSON.stringify(p.assignee) !== JSON.stringify(cv.assignee);
    cv.assignee = p.assignee ? { type: p.assignee.type, id: p.assignee.id } : null;
    if (changed && p.assignee) events.push('conversation.assigned');
  }
  return events;
}
