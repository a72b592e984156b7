/** Waits 1.5 s for the conversation's next inbound message (the due-time hold: src/worker/hold.ts). */
import { defineHandler } from 'switchyard';
import { record } from '../workflow/record.js';

export default defineHandler({
  id: 'hold-waiter',
  on: ['conversation.closed'],
  async handle(event, ctx) {
    const conv = event.data.id;
    const reply = await ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: '1500ms' });
    record({ h: 'hold-waiter', at: 'done', conv, got: reply ? reply.data.body : null });
  },
});
