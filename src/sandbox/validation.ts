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

/** Parses an ISO date or timestamp query parameter; a bare date means its start (or end, with `endOfDay`). */
export function timeParam(value: string | undefined, field: string, endOfDay = false): number | undefined {
  if (value === undefined || value === '') return undefined;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const ms = Date.parse(dateOnly ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(ms)) throw new ApiError(422, 'The given data was invalid.', undefined, { [field]: ['must be an ISO 8601 date or timestamp'] });
  return dateOnly && endOfDay ? ms + 864e5 - 1 : ms;
}
