/** A step and a write, a sleep (WFF_SLEEP_MS, default 2 s), then one write (and WFF_LINGER_MS of lingering): the write after the sleep must happen once per run. */
import { defineHandler } from 'switchyard';
import { mark, noteConv } from './mark.js';

export default defineHandler({
  id: 'wff-sleeper',
  on: ['conversation.opened'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    const id = event.id;
    const conv = noteConv(event.data.id);
    await ctx.step('before', async () => {
      mark({ h: 'sleeper', at: 'step', id });
      return 1;
    });
    await ctx.api.notes.create(conv, { body: `before ${id}` });
    mark({ h: 'sleeper', at: 'pre', id });
    await ctx.sleep('nap', Number(process.env['WFF_SLEEP_MS'] ?? 2000));
    // In a step: exactly once per run (plain code after the sleep may run again, e.g. when the job's lock lapsed).
    await ctx.step('woke', async () => {
      mark({ h: 'sleeper', at: 'woke', id });
      return 1;
    });
    await ctx.api.notes.create(conv, { body: `after ${id}` });
    // WFF_LINGER_MS: lingers after the write (a kill test stops the worker here, before the run is recorded done).
    const linger = Number(process.env['WFF_LINGER_MS'] ?? 0);
    if (linger > 0) await new Promise((r) => setTimeout(r, linger));
    mark({ h: 'sleeper', at: 'done', id });
  },
});
