/**
 * Waits for its conversation's `message.sent` whose body is "done": `{ on: 'conversation', where }` (issue 32
 * item 4); subject `legacy` writes the same match as a bare key function (deprecated: every event of the name
 * is tried). Cancelled by its conversation's `conversation.opened` with subject "stop" (a keyed `where` in cancelOn).
 */
import { defineHandler } from 'switchyard';
import { record } from '../workflow/record.js';

export default defineHandler({
  id: 'wf-where',
  on: ['conversation.closed'],
  // A reopening with subject "stop" of the run's own conversation cancels it.
  cancelOn: [{ event: 'conversation.opened', match: { on: 'conversation', where: (e) => e.data.subject === 'stop' } }],
  async handle(event, ctx) {
    const conv = event.data.id;
    record({ h: 'where', at: 'start', conv });
    const legacy = (e: { data: unknown }) => {
      const d = e.data as { conversation_id?: number; id?: number };
      return d.conversation_id ?? d.id;
    };
    const reply = await ctx.waitForEvent('done', {
      event: 'message.sent',
      match: event.data.subject === 'legacy' ? legacy : { on: 'conversation', where: (e) => e.data.body === 'done' },
      timeout: '30s',
    });
    record({ h: 'where', at: 'done', conv, got: reply ? reply.data.body : null });
  },
});
