import type { Context } from 'hono';
import { z } from 'zod';
import { ApiError, fromZod, notFound } from './errors.js';

/**
 * The request body as JSON; an empty body is `{}`. Unparseable JSON is a
 * malformed request (spec, Errors: 400; retrying unchanged does not help).
 * Any Hono context: the API routes and the `/_sandbox` hooks read bodies alike.
 */
export async function readJson(c: Context): Promise<unknown> {
  const raw = await c.req.text();
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new ApiError(400, 'The request body is not valid JSON.');
  }
}

/**
 * A request body object that refuses fields it does not know: 422 naming each
 * one with the names allowed. The service "declines to guess" (spec, Errors:
 * 422), so a misspelt or invented field is never silently dropped; where the
 * spec does not give the names (order update, task fields), docs/sandbox.md
 * lists the ones the sandbox takes.
 */
export function strictBody<S extends z.ZodRawShape>(shape: S) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? `is not a field of this request; allowed: ${allowed}` : undefined),
  });
}

/** The 422 message of a string over its limit of `max` characters. */
export const tooLong = (max: number): string => `may not be longer than ${max} characters`;

/** Validates with zod; failures become 422 `{message, errors}` naming the fields. */
export function check<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw fromZod(result.error);
  return result.data;
}

/** Reads and validates the body in one go. */
export async function body<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  return check(schema, await readJson(c));
}

/** Parses an int query/path parameter; anything else is 422 naming it. */
export function intParam(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^-?\d+$/.test(value)) throw new ApiError(422, 'The given data was invalid.', undefined, { [field]: ['must be an integer'] });
  return Number(value);
}

/**
 * The record a path id names, or 404 "`what` not found". A non-numeric id
 * names nothing, and another workspace's record answers the same (spec: 404).
 */
export function recordAt<T>(records: ReadonlyMap<number, T>, raw: string, what: string): T {
  const found = /^\d+$/.test(raw) ? records.get(Number(raw)) : undefined;
  if (found === undefined) throw notFound(what);
  return found;
}

/**
 * Spec, General conventions: `date` fields are `YYYY-MM-DD`. Only real
 * calendar dates pass (zod checks month lengths and leap years): `2025-13-45`
 * and `2025-02-29` are refused.
 */
export const CalendarDate = z.iso.date({ error: 'must be a calendar date written YYYY-MM-DD' });

/**
 * Spec, General conventions: timestamps are ISO 8601 strings with an offset:
 * `YYYY-MM-DDThh:mm:ss`, optional fraction, then `Z` or `±hh:mm`. A local time
 * without an offset, or `Feb 1 2031`, is refused; so is an impossible date.
 */
export const Timestamp = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 timestamp with an offset, e.g. 2031-02-01T09:30:00Z',
});

/**
 * Parses a query parameter that takes an ISO 8601 date or timestamp (spec:
 * `created_after`, `since`, `due_before`…); a bare date means its start (or,
 * with `endOfDay`, its last millisecond), in UTC.
 */
export function timeParam(value: string | undefined, field: string, endOfDay = false): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (CalendarDate.safeParse(value).success) {
    const start = Date.parse(`${value}T00:00:00Z`);
    return endOfDay ? start + 864e5 - 1 : start;
  }
  if (!Timestamp.safeParse(value).success) {
    throw new ApiError(422, 'The given data was invalid.', undefined, {
      [field]: ['must be a date (YYYY-MM-DD) or an ISO 8601 timestamp with an offset'],
    });
  }
  return Date.parse(value);
}
