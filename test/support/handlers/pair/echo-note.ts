/** Test handler: a second subscriber of message.received (adds an "echo" note). */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'echo-note',
  on: ['message.received'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.conversation_id, { body: `echo ${event.id ?? ctx.delivery.key}` });
  },
});
