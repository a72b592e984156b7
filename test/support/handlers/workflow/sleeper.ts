/** Sleeps between two API writes; a step before: the replay after the sleep runs neither again. */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'wf-sleeper',
  on: ['conversation.opened'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    const conv = event.data.id;
    await ctx.step('before', async () => {
      record({ h: 'sleeper', at: 'step', conv });
      return 1;
    });
    await ctx.api.notes.create(conv, { body: `before ${event.id}` });
    record({ h: 'sleeper', at: 'pre-sleep', conv });
    await ctx.sleep('nap', Number(process.env['WF_SLEEP_MS'] ?? 1500));
    await ctx.api.notes.create(conv, { body: `after ${event.id}` });
    record({ h: 'sleeper', at: 'done', conv });
  },
});
