/**
 * Ordered per conversation (message.received): counts its runs in ctx.state, sleeps a moment (a durable
 * sleep: the run parks and is woken), then adds the note "run <n> in <workspace>" in a step.
 */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'cw-counter',
  on: ['message.received'],
  abilities: ['conversations:write'],
  orderBy: 'conversation',
  async handle(event, ctx) {
    const { n } = (await ctx.state.update((c) => ({ n: ((c as { n?: number } | null)?.n ?? 0) + 1 }))) as { n: number };
    await ctx.sleep('gap', 100);
    await ctx.step('note', async () => ctx.api.notes.create(event.data.conversation_id, { body: `run ${n} in ${ctx.workspace.id}` }));
  },
});
