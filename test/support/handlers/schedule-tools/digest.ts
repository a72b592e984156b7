/** Test schedule with settings and abilities (doctor, handlers, reload): hourly, reads tasks. */
import { z } from 'zod';
import { defineSchedule } from 'switchyard';

export default defineSchedule({
  id: 'digest',
  every: '1h',
  abilities: ['tasks:read'],
  settings: z.object({
    DIGEST_DAYS: z.coerce.number().int().min(1).default(1).describe('days ahead the digest looks'),
    DIGEST_LABEL: z.string().min(1),
  }),
  async handle(ctx) {
    await ctx.api.tasks.list({ due_before: new Date(Date.parse(ctx.tick) + ctx.settings.DIGEST_DAYS * 86_400_000) }).firstPage();
  },
});
