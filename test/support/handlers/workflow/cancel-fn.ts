/** Subject `fn`: sleeps a minute unless an inbound message of the conversation comes (cancelOn with a key function). */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'wf-cancel-fn',
  on: ['conversation.assigned'],
  cancelOn: [
    {
      event: 'message.received',
      match: (e) => {
        const d = e.data as { conversation_id?: number; id?: number };
        return d.conversation_id ?? d.id;
      },
    },
  ],
  async handle(event, ctx) {
    if (event.data.subject !== 'fn') return;
    await ctx.sleep('long', '1m');
    record({ h: 'cancel-fn', at: 'after', conv: event.data.id });
  },
});
