import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineHandler, HandlerSettingsError } from '../../../src/handler/define.js';
import { parseSettings, settingVariables } from '../../../src/handler/settings.js';
import { businessHoursSetting, durationSetting } from '../../../src/recipes/setting-schemas.js';
import { isOpen } from '../../../src/recipes/business-hours.js';
import { testHandler } from '../../../src/testing/index.js';

// A string default of a settings helper is the text the environment would hold: read as an
// environment value is, so ctx.settings gets parsed business hours (not the text) at run time.
const seen: unknown[] = [];
const hoursHandler = defineHandler({
  id: 'hours-default',
  on: ['message.received'],
  settings: z.object({
    BUSINESS_HOURS: businessHoursSetting().default('Mon-Fri 09:00-17:00 Europe/Berlin'),
    LATER: businessHoursSetting().describe('described first').default('Sat 10:00-14:00'),
    WAIT: durationSetting().default('1.5m'),
    NOTE: z.string().default('as written'),
  }),
  handle(_event, ctx) {
    // Tuesday 2026-03-03 10:00 in Berlin (09:00 UTC): open; 20:00 UTC: closed.
    seen.push({
      open: isOpen(ctx.settings.BUSINESS_HOURS, new Date('2026-03-03T09:00:00Z')),
      closed: isOpen(ctx.settings.BUSINESS_HOURS, new Date('2026-03-03T20:00:00Z')),
      zone: ctx.settings.BUSINESS_HOURS.timeZone,
      later: ctx.settings.LATER.timeZone,
      wait: ctx.settings.WAIT,
      note: ctx.settings.NOTE,
    });
  },
});

describe('settings helpers with a string default', () => {
  it('businessHoursSetting().default("Mon-Fri 09:00-17:00 Europe/Berlin") gives business hours at run time (testHandler)', async () => {
    seen.length = 0;
    const run = await testHandler(hoursHandler, 'message.received');
    expect(run.error).toBeUndefined();
    expect(run.outcome).toBe('completed');
    expect(seen).toEqual([{ open: true, closed: false, zone: 'Europe/Berlin', later: 'UTC', wait: 90_000, note: 'as written' }]);
  });

  it('works the same with other settings given to testHandler, and an environment value still wins', async () => {
    seen.length = 0;
    await testHandler(hoursHandler, 'message.received', { settings: { NOTE: 'given' }, env: { WAIT: '2s' } });
    await testHandler(hoursHandler, 'message.received', { env: { BUSINESS_HOURS: 'Sat 10:00-11:00 Asia/Tokyo' } });
    expect(seen).toMatchObject([
      { zone: 'Europe/Berlin', wait: 2_000, note: 'given' },
      { zone: 'Asia/Tokyo', open: false },
    ]);
  });

  it('the listing shows the default as written; a default that does not parse is a settings problem naming it', async () => {
    expect(settingVariables(hoursHandler.settings!).find((v) => v.name === 'BUSINESS_HOURS')).toEqual({
      name: 'BUSINESS_HOURS',
      required: false,
      default: 'Mon-Fri 09:00-17:00 Europe/Berlin',
    });
    const bad = z.object({ BUSINESS_HOURS: businessHoursSetting().default('Mon-Fri 9-5 Europe/Berlin') });
    expect(() => parseSettings('away', bad, {})).toThrow(
      'handler "away" settings: BUSINESS_HOURS is not set and its default is invalid: cannot read "Mon-Fri 9-5"; expected e.g. "Mon-Fri 09:00-17:00 Europe/Berlin"',
    );
    const badHandler = defineHandler({ id: 'bad-default', on: ['message.received'], settings: bad, handle: () => undefined });
    await expect(testHandler(badHandler, 'message.received')).rejects.toThrow(HandlerSettingsError);
    // A value in the environment replaces the bad default.
    expect(parseSettings('away', bad, { BUSINESS_HOURS: 'Sun 10:00-12:00' }).BUSINESS_HOURS.timeZone).toBe('UTC');
  });
});
