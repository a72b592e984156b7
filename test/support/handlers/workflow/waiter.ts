/** Waits for the conversation's next inbound message (3 s); subject `linger` first lingers 600 ms (lookback), `nolook` waits without lookback, `fn` matches with a key function (6 s). */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'wf-waiter',
  on: ['conversation.closed'],
  async handle(event, ctx) {
    const conv = event.data.id;
    record({ h: 'waiter', at: 'start', conv });
    if (event.data.subject === 'linger' || event.data.subject === 'nolook') await new Promise((r) => setTimeout(r, 600));
    // Subject `fn`: the same wait with a key function (the conversation id of either event).
    const byFunction = (e: { data: unknown }) => {
      const d = e.data as { conversation_id?: number; id?: number };
      return d.conversation_id ?? d.id;
    };
    const reply = await ctx.waitForEvent('reply', {
      event: 'message.received',
      match: event.data.subject === 'fn' ? byFunction : 'conversation',
      timeout: event.data.subject === 'fn' ? '6s' : '3s',
      ...(event.data.subject === 'nolook' ? { lookback: false } : {}),
    });
    record({ h: 'waiter', at: 'done', conv, got: reply ? reply.data.body : null });
  },
});
