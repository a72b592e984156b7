import { z } from 'zod';
import { parseDuration } from '../util/index.js';
import { BUSINESS_HOURS_EXAMPLE, BusinessHoursError, parseBusinessHours, type BusinessHours } from './business-hours.js';

/**
 * Settings helpers: zod schemas for environment values that are more than a
 * string or a number, for a handler's `settings`. Each parses when the handler
 * modules are loaded, so a bad value stops start-up naming the variable. (For
 * a yes/no flag use zod's own `z.stringbool()`.)
 */

/**
 * A helper's schema: an environment text parsed to `T`. In a handler's
 * `settings`, `.default()` also takes that text (`.default('Mon-Fri 09:00-17:00
 * Europe/Berlin')`, `.default('30s')`): a string default is parsed as if the
 * environment held it, so a bad one stops start-up like a bad value (zod
 * alone would hand the text over unparsed).
 */
export interface TextSetting<T> extends z.ZodType<T, string> {
  default(value: string | Exclude<T, undefined> | (() => Exclude<T, undefined>)): z.ZodDefault<this>;
}

/**
 * Business hours such as `Mon-Fri 09:00-17:00 Europe/Berlin` (ranges joined by
 * `;`), parsed to {@link BusinessHours}.
 */
export function businessHoursSetting(): TextSetting<BusinessHours> {
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
export function durationSetting(): TextSetting<number> {
  return z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === null) {
      ctx.addIssue({ code: 'custom', message: 'expected a duration such as 30s, 5m, 1.5h or 7d' });
      return z.NEVER;
    }
    return ms;
  });
}
