/** `switchyard waits` tests: after a close, waits an hour for the conversation's next inbound message. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'cli-listener',
  on: ['conversation.closed'],
  async handle(_event, ctx) {
    await ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: '1h' });
  },
});
