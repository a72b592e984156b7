/** waits-ops tests: one of two handlers that both sleep after a new lead (two parked runs of one delivery). */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'ops-twin-b',
  on: ['lead.created'],
  async handle(_event, ctx) {
    await ctx.sleep('settle', '1h');
  },
});
