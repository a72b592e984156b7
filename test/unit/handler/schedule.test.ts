import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandlerDefinitionError } from '../../../src/handler/define.js';
import { defineSchedule, describeSchedule, isSchedule } from '../../../src/handler/schedule.js';
import { nextRun, repeatOptions } from '../../../src/sources/schedule/repeat.js';
import { loadHandlerDir } from '../../../src/handler/loader.js';

const loose = defineSchedule as (def: unknown) => ReturnType<typeof defineSchedule>;
function refused(def: unknown): string {
  try {
    loose(def);
  } catch (e) {
    expect(e).toBeInstanceOf(HandlerDefinitionError);
    return (e as Error).message;
  }
  throw new Error('expected defineSchedule to throw');
}
const handle = () => undefined;

describe('defineSchedule', () => {
  it('takes every or cron (with a time zone), applies defaults and is recognisable', () => {
    const s = defineSchedule({ id: 'digest', every: '15m', handle });
    expect(isSchedule(s)).toBe(true);
    expect(s).toMatchObject({
      id: 'digest',
      everyMs: 900_000,
      cron: null,
      timezone: null,
      priority: 'normal',
      timeoutMs: null,
      settings: null,
    });
    expect(s.retry.attempts).toBe(10);
    expect(repeatOptions(s)).toEqual({ every: 900_000 });
    expect(describeSchedule(s)).toBe('every 15m');
    const c = defineSchedule({
      id: 'morning',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      priority: 'low',
      retry: { attempts: 3 },
      timeout: '30s',
      settings: z.object({ X: z.string().default('a') }),
      handle,
    });
    expect(repeatOptions(c)).toEqual({ pattern: '0 9 * * 1-5', tz: 'Europe/Paris' });
    expect(describeSchedule(c)).toBe('cron 0 9 * * 1-5 (Europe/Paris)');
    expect(c).toMatchObject({ priority: 'low', timeoutMs: 30_000, retry: { attempts: 3 } });
    // 9:00 in Paris on a weekday: 07:00 or 08:00 UTC.
    const next = new Date(nextRun(c, Date.parse('2025-03-07T12:00:00Z')) as number);
    expect(next.toISOString()).toBe('2025-03-10T08:00:00.000Z');
  });

  it.each([
    [{ id: 'x', handle }, 'schedule "x": give exactly one of "every"'],
    [{ id: 'x', every: '1m', cron: '* * * * *', handle }, 'schedule "x": give exactly one of "every"'],
    [{ id: 'x', every: '10ms', handle }, 'schedule "x": "every" must be a duration of at least 1s'],
    [{ id: 'x', every: 'soon', handle }, 'schedule "x": "every" must be a duration of at least 1s'],
    [{ id: 'x', every: '1m', timezone: 'Europe/Paris', handle }, 'schedule "x": "timezone" applies to "cron" only'],
    [{ id: 'x', cron: '61 * * * *', handle }, 'schedule "x": "cron" must be a cron pattern of 5 fields'],
    [{ id: 'x', cron: 'every day', handle }, 'schedule "x": "cron" must be a cron pattern of 5 fields'],
    [{ id: 'x', cron: '0 9 * * *', timezone: 'Mars/Olympus', handle }, 'schedule "x": "timezone" must be an IANA time zone'],
    [{ id: 'x', every: '1m', priority: 'urgent', handle }, 'schedule "x": "priority" must be'],
    [{ id: 'x', every: '1m', evry: 2, handle }, 'schedule "x": unknown option "evry"; did you mean "every"?'],
    [{ id: 'x', every: '1m' }, 'schedule "x": "handle" must be a function'],
    [{ id: 'X!', every: '1m', handle }, 'schedule id "X!" is invalid'],
    [{ id: 'x', every: '1m', abilities: ['orders:rite'], handle }, 'schedule "x": unknown ability "orders:rite"'],
  ])('refuses %j naming the schedule and what is expected', (def, message) => {
    expect(refused(def)).toContain(message);
  });

  it('is loaded from HANDLERS_DIR beside handlers; an id used by a handler and a schedule stops start-up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-sched-'));
    const kit = new URL('../../../src/index.ts', import.meta.url).href;
    writeFileSync(
      join(dir, 'a-digest.ts'),
      `import { defineSchedule } from '${kit}';\nexport default defineSchedule({ id: 'digest', every: '1h', handle() {} });\n`,
    );
    writeFileSync(
      join(dir, 'b-won.ts'),
      `import { defineHandler } from '${kit}';\nexport default defineHandler({ id: 'won', on: ['lead.won'], handle() {} });\n`,
    );
    const loaded = await loadHandlerDir(dir);
    expect(loaded.schedules.map((s) => s.schedule.id)).toEqual(['digest']);
    expect(loaded.handlers.map((h) => h.handler.id)).toEqual(['won']);
    writeFileSync(
      join(dir, 'c-twin.ts'),
      `import { defineHandler } from '${kit}';\nexport default defineHandler({ id: 'digest', on: ['lead.won'], handle() {} });\n`,
    );
    await expect(loadHandlerDir(dir)).rejects.toThrow(/handler id "digest" is already defined in .*a-digest\.ts; ids must be unique/);
  });
});
