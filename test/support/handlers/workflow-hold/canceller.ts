/** Sleeps 1.5 s after an assignment unless the conversation gets an inbound message (cancelOn; the due-time hold). */
import { defineHandler } from 'switchyard';
import { record } from '../workflow/record.js';

export default defineHandler({
  id: 'hold-cancel',
  on: ['conversation.assigned'],
  cancelOn: [{ event: 'message.received', match: 'conversation' }],
  async handle(event, ctx) {
    const conv = event.data.id;
    await ctx.sleep('nap', '1500ms');
    record({ h: 'hold-cancel', at: 'after', conv });
  },
});
