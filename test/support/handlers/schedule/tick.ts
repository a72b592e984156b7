/** Test schedule: every second, records its tick and delivery key on a Redis list (TICK_REDIS_URL, TICK_LIST). */
import { Redis } from 'ioredis';
import { z } from 'zod';
import { defineSchedule } from 'switchyard';

export default defineSchedule({
  id: 'tick',
  every: '1s',
  settings: z.object({ TICK_REDIS_URL: z.string(), TICK_LIST: z.string() }),
  async handle(ctx) {
    const redis = new Redis(ctx.settings.TICK_REDIS_URL, { maxRetriesPerRequest: 3 });
    try {
      await redis.rpush(
        ctx.settings.TICK_LIST,
        JSON.stringify({ tick: ctx.tick, key: ctx.delivery.key, attempt: ctx.delivery.attempt, pid: process.pid }),
      );
    } finally {
      redis.disconnect();
    }
  },
});
