/** A schedule of every workspace, each second: one step per tick. */
import { defineSchedule } from 'switchyard';

export default defineSchedule({
  id: 'cw-tick',
  every: '1s',
  async handle(ctx) {
    await ctx.step('tick', async () => ctx.tick);
  },
});
