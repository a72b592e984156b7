/** For `replay --inline` of a workflow: naps 15 minutes, counts the conversation's messages in ctx.state, then notes the count. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'replay-napper',
  on: ['message.received'],
  abilities: ['conversations:write'],
  state: { key: 'conversation' },
  async handle(event, ctx) {
    await ctx.sleep('nap', '15m');
    const n = await ctx.state.update((c) => (typeof c === 'number' ? c : 0) + 1);
    await ctx.step(
      'note',
      async () => (await ctx.api.notes.create(event.data.conversation_id, { body: `message ${String(n)} after a nap` })).id,
    );
  },
});
