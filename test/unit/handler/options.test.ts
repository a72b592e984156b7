import { describe, expect, test } from 'vitest';
import { defineLoose, definitionError } from '../../support/definitions.js';
import { z } from 'zod';
import { DEFAULT_RETRY, defineHandler, HandlerSettingsError } from '../../../src/handler/define.js';
import { describeRetry, retryHorizonMs } from '../../../src/handler/options.js';
import { parseSettings, settingVariables } from '../../../src/handler/settings.js';
import { handlerJobOptions } from '../../../src/queue/job-options.js';
import { businessHoursSetting, durationSetting } from '../../../src/recipes/setting-schemas.js';
import { readHandlerSettings } from '../../../src/handler/settings.js';

const base = { id: 'h', on: ['lead.won'], handle() {} };

describe('retry', () => {
  test("defaults are today's: 10 attempts, exponential from 2 s, about 17 minutes of back-off", () => {
    const h = defineHandler({ id: 'h', on: ['lead.won'], handle() {} });
    expect(h.retry).toEqual({ attempts: 10, backoff: { type: 'exponential', delay: 2_000 } });
    expect(h.retry).toBe(DEFAULT_RETRY);
    expect(retryHorizonMs(DEFAULT_RETRY)).toBe(1_022_000);
    expect(describeRetry(DEFAULT_RETRY)).toBe('10 attempts, exponential from 2s (dead-lettered after ~17m of back-off)');
  });

  test('attempts and a backoff with a duration text or milliseconds', () => {
    expect(defineLoose({ ...base, retry: { attempts: 2 } }).retry).toEqual({ attempts: 2, backoff: { type: 'exponential', delay: 2_000 } });
    expect(defineLoose({ ...base, retry: { backoff: { type: 'fixed', delay: '1.5s' } } }).retry).toEqual({
      attempts: 10,
      backoff: { type: 'fixed', delay: 1_500 },
    });
    const fixed = defineLoose({ ...base, retry: { attempts: 4, backoff: { type: 'fixed', delay: 250 } } }).retry;
    expect(retryHorizonMs(fixed)).toBe(750);
    expect(describeRetry(defineLoose({ ...base, retry: { attempts: 1 } }).retry)).toBe('1 attempt (no retry)');
  });

  test('become the job options of the fan-out', () => {
    const h = defineLoose({ ...base, retry: { attempts: 3, backoff: { type: 'fixed', delay: '5s' } } });
    expect(handlerJobOptions(h.retry)).toMatchObject({ attempts: 3, backoff: { type: 'fixed', delay: 5_000 }, removeOnFail: false });
    expect(handlerJobOptions(DEFAULT_RETRY)).toMatchObject({ attempts: 10, backoff: { type: 'exponential', delay: 2_000 } });
  });

  test.each([
    [{ attempts: 0 }, '"retry.attempts" must be a whole number from 1 to 1000 (runs in all, the first included), got 0'],
    [{ attempts: 2.5 }, '"retry.attempts" must be a whole number'],
    [{ attempts: '3' }, '"retry.attempts" must be a whole number'],
    [{ backoff: { type: 'linear', delay: '1s' } }, `"retry.backoff" must be { type: 'exponential' | 'fixed', delay }, got type "linear"`],
    [
      { backoff: { type: 'fixed', delay: 'soon' } },
      `"retry.backoff.delay" must be a duration such as '2s', '500ms' or a number of milliseconds, got "soon"`,
    ],
    [{ backoff: { type: 'fixed', delay: -1 } }, '"retry.backoff.delay" must be a duration'],
    [{ tries: 3 }, '"retry" has an unknown option "tries"; expected attempts and backoff'],
    [3, '"retry" must be an object'],
  ])('a bad retry %j is a definition error naming the handler', (retry, message) => {
    expect(definitionError({ ...base, retry })).toContain(`handler "h": ${message}`);
  });
});

describe('timeout', () => {
  test('none by default; a duration text or milliseconds', () => {
    expect(defineLoose(base).timeoutMs).toBeNull();
    expect(defineLoose({ ...base, timeout: '30s' }).timeoutMs).toBe(30_000);
    expect(defineLoose({ ...base, timeout: 250 }).timeoutMs).toBe(250);
  });

  test.each([0, '0s', 'forever', -5, {}])('a bad timeout %j is a definition error', (timeout) => {
    expect(definitionError({ ...base, timeout })).toContain('handler "h": "timeout" must be a positive duration such as \'30s\'');
  });
});

describe('settings in the definition', () => {
  test('must be a zod object schema of environment variable names', () => {
    expect(definitionError({ ...base, settings: z.string() })).toBe(
      'handler "h": "settings" must be a zod object schema such as z.object({ FOLLOW_UP_DAYS: z.coerce.number().default(2) })',
    );
    expect(definitionError({ ...base, settings: { FOO: 'bar' } })).toContain('"settings" must be a zod object schema');
    expect(definitionError({ ...base, settings: z.object({ 'follow-up': z.string() }) })).toContain(
      'settings key "follow-up" is not an environment variable name',
    );
  });

  test.each([
    'WORKSPACE_API_TOKEN',
    'WEBHOOK_SECRETS',
    'ADMIN_PASSWORD',
    'REDIS_URL',
    'REDIS_PASSWORD',
    'WORKSPACE_API_TOKEN_FILE',
    'SENTINEL_PASSWORD',
  ])('naming a Switchyard secret (%s) is rejected: secrets never reach handlers', (name) => {
    expect(definitionError({ ...base, settings: z.object({ [name]: z.string() }) })).toBe(
      `handler "h": settings name ${name}, one of Switchyard's own secrets; secrets never reach handlers: give the handler a variable of its own (e.g. MY_CRM_TOKEN)`,
    );
  });
});

describe('parseSettings', () => {
  const schema = z.object({
    DAYS: z.coerce.number().positive('expected a positive number of days').default(2),
    STAGE: z.string(),
    MODE: z.enum(['fast', 'slow']).optional(),
    ON: z.stringbool().default(false),
    HOOK: z.url().optional(),
  });

  test('reads only the schema’s variables, applies defaults, freezes the result', () => {
    const s = parseSettings('h', schema, { STAGE: 'Customer', ON: 'yes', PATH: '/bin', WORKSPACE_API_TOKEN: 'tok' });
    expect(s).toEqual({ DAYS: 2, STAGE: 'Customer', ON: true });
    expect(Object.isFrozen(s)).toBe(true);
  });

  test('an empty value counts as unset', () => {
    expect(parseSettings('h', schema, { STAGE: 'x', DAYS: '  ' }).DAYS).toBe(2);
  });

  test('every problem names the handler, the variable and what is expected, never the value', () => {
    let error: unknown;
    try {
      parseSettings('follow-up', schema, { DAYS: '-3', MODE: 'turbo-secret-value', HOOK: 'not a url' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HandlerSettingsError);
    const e = error as HandlerSettingsError;
    expect(e.code).toBe('handler_settings');
    expect(e.message).toBe(
      'handler "follow-up" settings: DAYS is invalid: expected a positive number of days; STAGE is not set: expected string; ' +
        'MODE is invalid: expected one of "fast"|"slow"; HOOK is invalid: expected a valid url',
    );
    expect(e.problems.map((p) => p.variable)).toEqual(['DAYS', 'STAGE', 'MODE', 'HOOK']);
    expect(e.message).not.toContain('turbo-secret-value');
    expect(e.stack).toBeDefined();
  });

  test('readHandlerSettings collects every handler’s problems and ignores Switchyard secrets in the environment', () => {
    const a = defineHandler({ id: 'a', on: ['lead.won'], settings: z.object({ A_DAYS: z.coerce.number() }), handle() {} });
    const b = defineHandler({ id: 'b', on: ['lead.won'], settings: z.object({ B_NAME: z.string().min(3) }), handle() {} });
    const none = defineHandler({ id: 'none', on: ['lead.won'], handle() {} });
    expect(() => readHandlerSettings([a, b, none], { A_DAYS: 'x', B_NAME: 'ab' })).toThrow(
      'handler "a" settings: A_DAYS is invalid: expected number\nhandler "b" settings: B_NAME is invalid: expected string to have >=3 characters',
    );
    const ok = readHandlerSettings([a, b, none], { A_DAYS: '4', B_NAME: 'abc' });
    expect(ok.get('a')).toEqual({ A_DAYS: 4 });
    expect(ok.get('none')).toEqual({});
  });

  test('settingVariables lists each variable, whether it is required, its default and description', () => {
    expect(
      settingVariables(
        z.object({ DAYS: z.coerce.number().default(2).describe('days until due'), STAGE: z.string(), MODE: z.string().optional() }),
      ),
    ).toEqual([
      { name: 'DAYS', required: false, default: 2, description: 'days until due' },
      { name: 'STAGE', required: true },
      { name: 'MODE', required: false },
    ]);
  });
});

describe('settings helpers', () => {
  test('businessHoursSetting parses at load time and says what is expected', () => {
    const schema = z.object({ BUSINESS_HOURS: businessHoursSetting() });
    expect(parseSettings('away', schema, { BUSINESS_HOURS: 'Mon-Fri 09:00-17:00 Europe/Berlin' }).BUSINESS_HOURS.timeZone).toBe(
      'Europe/Berlin',
    );
    expect(() => parseSettings('away', schema, { BUSINESS_HOURS: 'Mon-Fri 09:00-17:00 Mars/Olympus' })).toThrow(
      'handler "away" settings: BUSINESS_HOURS is invalid: unknown time zone "Mars/Olympus"; expected e.g. "Mon-Fri 09:00-17:00 Europe/Berlin"',
    );
  });

  test('durationSetting gives milliseconds', () => {
    const schema = z.object({ WAIT: durationSetting().default(1_000) });
    expect(parseSettings('h', schema, { WAIT: '1.5m' }).WAIT).toBe(90_000);
    expect(parseSettings('h', schema, {}).WAIT).toBe(1_000);
    expect(() => parseSettings('h', schema, { WAIT: 'soon' })).toThrow('WAIT is invalid: expected a duration such as 30s, 5m, 1.5h or 7d');
  });
});
