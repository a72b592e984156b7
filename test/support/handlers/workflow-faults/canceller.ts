/** A step and a write, a sleep (WFF_CANCEL_SLEEP_MS, default 3 s) that an inbound message of the conversation cancels (cancelOn), then one write. */
import { defineHandler } from 'switchyard';
import { mark, noteConv } from './mark.js';

export default defineHandler({
  id: 'wff-cancel',
  on: ['conversation.assigned'],
  abilities: ['conversations:write'],
  cancelOn: [{ event: 'message.received', match: 'conversation' }],
  async handle(event, ctx) {
    const id = event.id;
    const conv = noteConv(event.data.id);
    await ctx.step('before', async () => {
      mark({ h: 'cancel', at: 'step', id });
      return 1;
    });
    await ctx.api.notes.create(conv, { body: `before ${id}` });
    mark({ h: 'cancel', at: 'pre', id });
    await ctx.sleep('long', Number(process.env['WFF_CANCEL_SLEEP_MS'] ?? 3000));
    // In a step: exactly once per run (plain code after the sleep may run again, e.g. when the job's lock lapsed).
    await ctx.step('woke', async () => {
      mark({ h: 'cancel', at: 'woke', id });
      return 1;
    });
    await ctx.api.notes.create(conv, { body: `after ${id}` });
    mark({ h: 'cancel', at: 'done', id });
  },
});
