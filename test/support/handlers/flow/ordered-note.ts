/**
 * Ordered per conversation (conversation.opened), with an API write: adds the
 * note "ordered <subject>" to the conversation, then fails the first attempt of
 * every subject ending in an even digit once, after the write.
 */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'ordered-note',
  on: ['conversation.opened'],
  abilities: ['conversations:write'],
  orderBy: 'conversation',
  retry: { attempts: 5, backoff: { type: 'fixed', delay: 50 } },
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.id, { body: `ordered ${event.data.subject ?? ''}` });
    if (/[02468]$/.test(event.data.subject ?? '') && ctx.delivery.attempt === 1) throw new Error('failing after the write, once');
  },
});
