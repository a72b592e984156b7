// bench/rerun: the handler re-run in bulk: one API call per run, a note on the closed conversation naming the event.
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'bulk-note',
  on: ['conversation.closed'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.id, { body: `bulk ${event.id ?? ctx.delivery.key}` });
  },
});
