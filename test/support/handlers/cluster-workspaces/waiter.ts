/** On conversation.opened, waits for the conversation's next message.sent, then adds the note "replied" in a step. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'cw-waiter',
  on: ['conversation.opened'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    const reply = await ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '5m' });
    if (reply) await ctx.step('note', async () => ctx.api.notes.create(event.data.id, { body: 'replied' }));
  },
});
