import { z } from 'zod';
import { parseDuration } from '../util/units.js';
import { BUSINESS_HOURS_EXAMPLE, BusinessHoursError, parseBusinessHours, type BusinessHours } from './business-hours.js';

/**
 * Settings helpers: zod schemas for environment values that are more than a
 * string or a number, for a handler's `settings`. Each parses when the handler
 * modules are loaded, so a bad value stops start-up naming the variable. (For
 * a yes/no flag use zod's own `z.stringbool()`.)
 */

/**
 * Business hours such as `Mon-Fri 09:00-17:00 Europe/Berlin` (ranges joined by
 * `;`), parsed to {@link BusinessHours}.
 */
export function businessHoursSetting(): z.ZodType<BusinessHours, string> {
  return z.string().transform((text, ctx) => {
    try {
      return parseBusinessHours(text);
    } catch (err) {
      if (!(err instanceof BusinessHoursError)) throw err;
      ctx.addIssue({ code: 'custom', message: `${err.why}; ${BUSINESS_HOURS_EXAMPLE}` });
      return z.NEVER;
    }
  });
}

/** A duration such as `2s`, `30m`, `1.5h`, `7d` (a bare number means seconds), parsed to milliseconds. */
export function durationSetting(): z.ZodType<number, string> {
  return z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === null) {
      ctx.addIssue({ code: 'custom', message: 'expected a duration such as 30s, 5m, 1.5h or 7d' });
      return z.NEVER;
    }
    return ms;
  });
}
