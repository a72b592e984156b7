/** Test handler: writes what its context holds as an internal note (its settings, and the context's own keys). */
import { z } from 'zod';
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'env-probe',
  on: ['message.received'],
  abilities: ['conversations:write'],
  settings: z.object({ ENV_PROBE_SETTING: z.string(), ENV_PROBE_COUNT: z.coerce.number().int().default(3) }),
  async handle(event, ctx) {
    const seen = { settings: ctx.settings, keys: Object.keys(ctx).sort(), api: Object.keys(ctx.api).sort() };
    await ctx.api.notes.create(event.data.conversation_id, { body: JSON.stringify(seen) });
  },
});
