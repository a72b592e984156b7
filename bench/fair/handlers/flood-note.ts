// bench/fair: the flood's handler: one API call per run (a note on the closed conversation naming the event), at the
// away-reply's priority (high), so both compete for the same pool of slots; LINGER_MS keeps the slot a while after.
import { z } from 'zod';
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'flood-note',
  on: ['conversation.closed'],
  abilities: ['conversations:write'],
  priority: 'high',
  settings: z.object({ LINGER_MS: z.coerce.number().int().min(0).default(0) }),
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.id, { body: `flood ${event.id ?? ctx.delivery.key}` });
    if (ctx.settings.LINGER_MS > 0) await new Promise((r) => setTimeout(r, ctx.settings.LINGER_MS));
  },
});
