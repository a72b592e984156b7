/** Sleeps a minute after an assignment unless the conversation gets an inbound message (cancelOn). */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'wf-cancel',
  on: ['conversation.assigned'],
  cancelOn: [{ event: 'message.received', match: 'conversation' }],
  async handle(event, ctx) {
    const conv = event.data.id;
    await ctx.step('first', async () => {
      record({ h: 'cancel', at: 'first', conv });
      return 1;
    });
    await ctx.sleep('long', '1m');
    record({ h: 'cancel', at: 'after', conv });
  },
});
