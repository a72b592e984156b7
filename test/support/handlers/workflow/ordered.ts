/** Ordered per conversation (message.sent), sleeping 800 ms in each run: later runs of the key wait behind it. */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'wf-ordered',
  on: ['message.sent'],
  orderBy: 'conversation',
  async handle(event, ctx) {
    record({ h: 'ordered', at: 'start', conv: event.data.conversation_id, seq: event.data.body });
    await ctx.sleep('gap', 800);
    record({ h: 'ordered', at: 'done', conv: event.data.conversation_id, seq: event.data.body });
  },
});
