/**
 * follow-up-task — when a conversation is closed, create a `call` task
 * "Follow up with <contact name>" due FOLLOW_UP_DAYS after the close, assigned
 * to the conversation's teammate (else the token's own teammate), linked to
 * the contact. Blocked contacts are skipped.
 *
 * Settings: FOLLOW_UP_DAYS (default 2; a number of days, fractions allowed),
 * read at start-up: a bad value stops it.
 * Calls: 1 read (the contact, shared with other handlers through the cache) + 1 write.
 */
import { z } from 'zod';
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'follow-up-task',
  on: ['conversation.closed'],
  abilities: ['contacts:read', 'tasks:write'],
  settings: z.object({
    FOLLOW_UP_DAYS: z.coerce
      .number('expected a number of days')
      .positive('expected a positive number of days')
      .max(365, 'expected at most 365 days')
      .default(2)
      .describe('days from the close to the task due date'),
  }),
  timeout: '2m',
  // Bulk work that nobody is waiting on: it gets the API budget after high and normal runs.
  priority: 'low',
  async handle(event, ctx) {
    const { FOLLOW_UP_DAYS } = ctx.settings;
    const conversation = event.data;
    const contact = await ctx.api.contacts.get(conversation.contact_id);
    if (contact.blocked) {
      ctx.log.info({ contact: contact.id }, 'contact is blocked; no follow-up task');
      return;
    }
    const closedAt = Date.parse(conversation.closed_at ?? event.createdAt ?? ctx.delivery.receivedAt);
    const task = await ctx.api.tasks.create({
      title: `Follow up with ${contact.name}`,
      type: 'call',
      due_at: new Date(closedAt + FOLLOW_UP_DAYS * 86_400_000).toISOString(),
      contact_id: contact.id,
      // Without an assignee the service assigns the token's own teammate (spec, Tasks).
      ...(conversation.assignee?.type === 'user' ? { assignee_id: conversation.assignee.id } : {}),
    });
    ctx.log.info({ task: task.id }, 'follow-up task created');
  },
});
