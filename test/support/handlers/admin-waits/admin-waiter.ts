/** Admin waits tests: after a close, waits an hour for the next inbound message, then notes what the wait returned. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'admin-waiter',
  on: ['conversation.closed'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    const reply = await ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: '1h' });
    await ctx.api.notes.create(event.data.id, { body: `admin-waiter got ${reply === null ? 'null' : 'a reply'}` });
  },
});
