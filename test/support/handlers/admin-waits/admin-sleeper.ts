/** Admin waits tests: sleeps an hour after a conversation is opened, then writes a note saying it woke. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'admin-sleeper',
  on: ['conversation.opened'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    await ctx.sleep('nap', '1h');
    await ctx.api.notes.create(event.data.id, { body: 'admin-sleeper woke' });
  },
});
