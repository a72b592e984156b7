/** Waits for the conversation's next inbound message (3 s); subject `linger` first lingers 600 ms (lookback), `nolook` waits without lookback. */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'wf-waiter',
  on: ['conversation.closed'],
  async handle(event, ctx) {
    const conv = event.data.id;
    record({ h: 'waiter', at: 'start', conv });
    if (event.data.subject === 'linger' || event.data.subject === 'nolook') await new Promise((r) => setTimeout(r, 600));
    const reply = await ctx.waitForEvent('reply', {
      event: 'message.received', match: 'conversation', timeout: '3s', ...(event.data.subject === 'nolook' ? { lookback: false } : {}),
    });
    record({ h: 'waiter', at: 'done', conv, got: reply ? reply.data.body : null });
  },
});
