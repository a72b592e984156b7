/**
 * Ordered per conversation, with a counter in ctx.state (the conversation's): each run adds one and creates a
 * contact named `count <conv> <n> <body>` in its workspace's API. A message whose text is `hold` waits for the
 * test's gate (globalThis.__syWsGate) first, holding its conversation's order line.
 */
import { defineHandler } from 'switchyard';

const g = globalThis as { __syWsGate?: Promise<void>; __syWsHeld?: string[] };

export default defineHandler({
  id: 'ws-count',
  on: ['message.received'],
  orderBy: 'conversation',
  async handle(event, ctx) {
    const conv = event.data.conversation_id;
    if (event.data.body === 'hold') {
      (g.__syWsHeld ??= []).push(ctx.delivery.key);
      await g.__syWsGate;
    }
    const n = await ctx.state.update((c) => (typeof c === 'number' ? c : 0) + 1);
    await ctx.api.contacts.create({ name: `count ${conv} ${String(n)} ${event.data.body}` });
  },
});
