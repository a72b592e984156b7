/** waits-ops tests: an assigned conversation waits an hour for its next inbound message, then notes what it got. */
import { defineHandler } from 'switchyard';
import { opsTally } from './tally.js';

export default defineHandler({
  id: 'ops-waiter',
  on: ['conversation.assigned'],
  async handle(event, ctx) {
    const reply = await ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: '1h' });
    const e = opsTally(ctx.delivery.key);
    e.after++;
    e.got.push(reply ? (reply.id ?? 'no id') : 'null');
  },
});
