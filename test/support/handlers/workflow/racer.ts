/** The race test's run: calls the test's hook, then waits (no lookback, 1 h) for the conversation's next inbound message. */
import { defineHandler } from 'switchyard';
import { hook, record } from './record.js';

export default defineHandler({
  id: 'wf-racer',
  on: ['conversation.created'],
  async handle(event, ctx) {
    if (event.data.subject !== null) return;
    record({ h: 'racer', at: 'start', conv: event.data.id });
    hook(event);
    const reply = await ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: '1h', lookback: false });
    record({ h: 'racer', at: 'done', conv: event.data.id, got: reply?.id ?? null });
  },
});
