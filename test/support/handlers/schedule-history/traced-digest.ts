/**
 * History tests of schedule runs: hourly (the test sees the first tick only); each run reads the
 * conversations in a step and writes a note, and the first attempt then fails (retryable), so the
 * second takes the step from the store and its note is a replay.
 */
import { defineSchedule } from 'switchyard';

export default defineSchedule({
  id: 'traced-digest',
  every: '1h',
  abilities: ['conversations:read', 'conversations:write'],
  retry: { attempts: 3, backoff: { type: 'fixed', delay: '50ms' } },
  async handle(ctx) {
    const conv = await ctx.step('conversation', async () => (await ctx.api.conversations.list().firstPage()).data[0]?.id ?? 0);
    await ctx.api.notes.create(conv, { body: `digest for ${ctx.tick}` });
    if (ctx.delivery.attempt === 1) throw new Error('transient failure after writing');
  },
});
