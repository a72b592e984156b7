/** Test handler: adds one internal note per inbound message; NOTE_SLEEP_MS makes it linger after writing (crash tests). */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'note-on-message',
  on: ['message.received'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.conversation_id, { body: `seen ${event.id ?? ctx.delivery.key}` });
    const linger = Number(ctx.env['NOTE_SLEEP_MS'] ?? 0);
    if (linger > 0) await new Promise((r) => setTimeout(r, linger));
  },
});
