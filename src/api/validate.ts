import { BUTTONS, MAX_CHARS, MONEY, PER_PAGE, SEGMENT_OPERATORS, segmentOperators, VALUELESS_OPERATORS } from '../spec/index.js';
import { DATE_FORM, DATE_OR_TIMESTAMP_FORM, dateOrTimestampProblem, dateProblem, TIMESTAMP_FORM, timestampProblem } from './dates.js';
import { RequestValidationError } from './errors.js';

/** `Array.isArray` that keeps the declared element type (the built-in narrows a readonly array to `any[]`). */
const isArray = (value: unknown): value is readonly unknown[] => Array.isArray(value);

/**
 * Pre-send checks of the spec's limits (Limits table and the request tables).
 * A request that breaks one never reaches the service (it would answer 422 and
 * spend a call of the quota); the first broken rule throws a
 * {@link RequestValidationError} naming the field and what is allowed.
 */
export class Check {
  constructor(private readonly op: string) {}

  fail(field: string, allowed: string): never {
    throw new RequestValidationError(field, allowed, this.op);
  }

  /** String of at most `max` characters (code points, as the service counts characters). */
  maxLen(field: string, value: string | null | undefined, max: number): this {
    if (value === undefined || value === null) return this;
    if (typeof value !== 'string') this.fail(field, `a string of at most ${max} characters`);
    if ([...value].length > max) this.fail(field, `at most ${max} characters (got ${[...value].length})`);
    return this;
  }

  /** Non-empty string of at most `max` characters. */
  required(field: string, value: string | null | undefined, max: number): this {
    if (typeof value !== 'string' || value.trim() === '') this.fail(field, `required, a non-empty string of at most ${max} characters`);
    return this.maxLen(field, value, max);
  }

  present(field: string, value: unknown, allowed: string): this {
    if (value === undefined || value === null) this.fail(field, `required: ${allowed}`);
    return this;
  }

  email(field: string, value: string | null | undefined): this {
    if (value === undefined || value === null) return this;
    // Deliberately loose (local@domain.tld): the service has the final word; this
    // catches the obvious typos before spending a call.
    if (typeof value !== 'string' || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) this.fail(field, 'an email address (name@domain.tld)');
    return this;
  }

  int(field: string, value: number | null | undefined, min = -Infinity, max = Infinity): this {
    if (value === undefined || value === null) return this;
    if (!Number.isInteger(value) || value < min || value > max) {
      this.fail(field, `an integer${min > -Infinity ? ` from ${min}` : ''}${max < Infinity ? ` to ${max}` : ''}`);
    }
    return this;
  }

  /** Amount sent as a JSON number, from `min` to {@link MONEY}.max (beyond it a JSON number no longer carries every cent). */
  amount(field: string, value: number | null | undefined, min = 0): this {
    if (value === undefined || value === null) return this;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MONEY.max)
      this.fail(field, `a number from ${min} to ${MONEY.maxText}`);
    return this;
  }

  perPage(value: number | undefined, min = PER_PAGE.min): this {
    return this.int('per_page', value, min, PER_PAGE.max);
  }

  oneOf<T extends string>(field: string, value: T | null | undefined, allowed: readonly string[]): this {
    if (value === undefined || value === null) return this;
    if (!allowed.includes(value)) this.fail(field, `one of ${allowed.join(', ')}`);
    return this;
  }

  /** A `date` field: a calendar date `YYYY-MM-DD` that exists (`2026-02-30` does not). */
  date(field: string, value: string | null | undefined): this {
    return this.when(field, value, DATE_FORM, dateProblem);
  }

  /** A timestamp: ISO 8601 with an offset on a day and time that exist, or a valid Date (sent as its ISO string). */
  timestamp(field: string, value: string | Date | null | undefined): this {
    return this.when(field, value, TIMESTAMP_FORM, timestampProblem);
  }

  /** A query bound that takes either a calendar date or a timestamp (`created_after`, `since`, `due_before`…). */
  dateOrTimestamp(field: string, value: string | Date | null | undefined): this {
    return this.when(field, value, DATE_OR_TIMESTAMP_FORM, dateOrTimestampProblem);
  }

  /** The shared date check (src/api/dates.ts): what was expected, then what was wrong. Null and undefined pass. */
  private when(field: string, value: unknown, form: string, problem: (value: string) => string | null): this {
    if (value === undefined || value === null) return this;
    const why =
      value instanceof Date
        ? Number.isNaN(value.getTime())
          ? 'got an Invalid Date'
          : null
        : typeof value === 'string'
          ? problem(value)
          : `got a ${typeof value}`;
    if (why) this.fail(field, `${form} (${why})`);
    return this;
  }

  /** Buttons: 1 to 10 labels, each 1–100 characters, all unique. */
  buttons(field: string, value: readonly string[] | undefined): this {
    if (!isArray(value) || value.length < BUTTONS.min || value.length > BUTTONS.max)
      this.fail(field, `${BUTTONS.min} to ${BUTTONS.max} button labels`);
    const seen = new Set<string>();
    value.forEach((b, i) => {
      this.required(`${field}.${i}`, b, MAX_CHARS.button);
      if (seen.has(b)) this.fail(`${field}.${i}`, `unique labels ("${b}" appears twice)`);
      seen.add(b);
    });
    return this;
  }

  /** Search rules: groups of known attribute/operator pairs, with a value exactly when the operator needs one. */
  segmentRules(field: string, groups: readonly (readonly { attribute: string; operator: string; value?: unknown }[])[] | undefined): this {
    if (groups === undefined) return this;
    if (!isArray(groups)) this.fail(field, 'an array of rule groups (arrays of rules)');
    groups.forEach((group, g) => {
      if (!isArray(group)) this.fail(`${field}.${g}`, 'an array of rules');
      group.forEach((rule, r) => {
        const at = `${field}.${g}.${r}`;
        const ops = segmentOperators(rule.attribute);
        if (!ops) this.fail(`${at}.attribute`, `one of ${Object.keys(SEGMENT_OPERATORS).join(', ')}`);
        if (!ops.includes(rule.operator)) this.fail(`${at}.operator`, `for ${rule.attribute}: one of ${ops.join(', ')}`);
        const valueless = VALUELESS_OPERATORS.includes(rule.operator);
        const hasValue = rule.value !== undefined && rule.value !== null;
        if (valueless && hasValue) this.fail(`${at}.value`, `no value with operator ${rule.operator}`);
        if (!valueless && !hasValue) this.fail(`${at}.value`, `a value with operator ${rule.operator}`);
        if (/_days$/.test(rule.operator) && !(typeof rule.value === 'number' && Number.isInteger(rule.value) && rule.value >= 0)) {
          this.fail(`${at}.value`, 'a whole number of days');
        }
      });
    });
    return this;
  }
}

/** Starts the checks of one operation. */
export const check = (op: string): Check => new Check(op);
