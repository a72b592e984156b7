/** A step and a write, then waits (WFF_WAIT_TIMEOUT, default 60 s) for the conversation's next inbound message, then one write naming it. */
import { defineHandler } from 'switchyard';
import { mark, noteConv } from './mark.js';

export default defineHandler({
  id: 'wff-waiter',
  on: ['conversation.closed'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    const id = event.id;
    const conv = noteConv(event.data.id);
    await ctx.step('before', async () => {
      mark({ h: 'waiter', at: 'step', id });
      return 1;
    });
    await ctx.api.notes.create(conv, { body: `before ${id}` });
    mark({ h: 'waiter', at: 'pre', id });
    const reply = await ctx.waitForEvent('reply', {
      event: 'message.received',
      match: 'conversation',
      timeout: process.env['WFF_WAIT_TIMEOUT'] ?? '60s',
    });
    const got = reply ? reply.id : 'timeout';
    // In a step: exactly once per run (plain code after the wait may run again, e.g. when the job's lock lapsed).
    await ctx.step('woke', async () => {
      mark({ h: 'waiter', at: 'woke', id, got });
      return 1;
    });
    await ctx.api.notes.create(conv, { body: `after ${id} ${got}` });
    mark({ h: 'waiter', at: 'done', id, got });
  },
});
