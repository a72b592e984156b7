/** Low-priority bulk work: one internal note per closed conversation event. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'bulk-note',
  on: ['conversation.closed'],
  abilities: ['conversations:write'],
  priority: 'low',
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.id, { body: `bulk ${event.id ?? ctx.delivery.key}` });
  },
});
