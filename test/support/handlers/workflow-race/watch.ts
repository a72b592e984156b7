/** Watches message.received from start-up (a cancelOn of it), so even the first wait for it looks back (src/worker/waits.ts); never triggered in the race test. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'wfr-watch',
  on: ['conversation.closed'],
  cancelOn: [{ event: 'message.received', match: 'conversation' }],
  async handle(_event, ctx) {
    await ctx.sleep('never', '1h');
  },
});
