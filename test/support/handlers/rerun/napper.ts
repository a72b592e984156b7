/** Re-run tests: sleeps an hour on conversation.closed (its run stays parked), then would write a note. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'napper',
  on: ['conversation.closed'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    await ctx.sleep('nap', '1h');
    await ctx.api.notes.create(event.data.id, { body: 'after the nap' });
  },
});
