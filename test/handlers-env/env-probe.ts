/** Test handler: writes what it sees in ctx.env as an internal note (its own setting, and which variables are present). */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'env-probe',
  on: ['message.received'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    const seen = { setting: ctx.env['ENV_PROBE_SETTING'] ?? null, names: Object.keys(ctx.env).sort(), values: Object.values(ctx.env) };
    await ctx.api.notes.create(event.data.conversation_id, { body: JSON.stringify(seen) });
  },
});
