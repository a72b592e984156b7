/** waits-ops tests: an opened conversation sleeps an hour (cancelled on its close), then counts that it went on. */
import { defineHandler } from 'switchyard';
import { opsTally } from './tally.js';

export default defineHandler({
  id: 'ops-sleeper',
  on: ['conversation.opened'],
  cancelOn: [
    { event: 'conversation.closed', match: 'conversation' },
    { event: 'conversation.created', match: 'conversation' },
  ],
  async handle(event, ctx) {
    await ctx.sleep('nap', '1h');
    opsTally(ctx.delivery.key).after++;
  },
});
