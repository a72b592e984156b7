/** `switchyard waits` tests: sleeps ten minutes after a conversation is opened. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'cli-napper',
  on: ['conversation.opened'],
  async handle(_event, ctx) {
    await ctx.sleep('nap', '10m');
  },
});
