/** Test handler: adds one internal note per inbound message; NOTE_SLEEP_MS makes it linger after writing (crash tests). */
import { z } from 'zod';
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'note-on-message',
  on: ['message.received'],
  abilities: ['conversations:write'],
  settings: z.object({ NOTE_SLEEP_MS: z.coerce.number().int().min(0).default(0) }),
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.conversation_id, { body: `seen ${event.id ?? ctx.delivery.key}` });
    const linger = ctx.settings.NOTE_SLEEP_MS;
    if (linger > 0) await new Promise((r) => setTimeout(r, linger));
  },
});
