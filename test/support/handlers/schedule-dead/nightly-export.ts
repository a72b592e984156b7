/**
 * Test schedule that fails for good until cured (`globalThis.__syScheduleCured`): hourly, so the test
 * sees the first tick only. Each successful run records its tick and delivery key on `globalThis.__syScheduleRuns`.
 */
import { defineSchedule, UnrecoverableError } from 'switchyard';

const g = globalThis as { __syScheduleCured?: boolean; __syScheduleRuns?: { tick: string; key: string }[] };

export default defineSchedule({
  id: 'nightly-export',
  every: '1h',
  retry: { attempts: 1 },
  handle(ctx) {
    if (!g.__syScheduleCured) throw new UnrecoverableError('export target unreachable');
    (g.__syScheduleRuns ??= []).push({ tick: ctx.tick, key: ctx.delivery.key });
  },
});
