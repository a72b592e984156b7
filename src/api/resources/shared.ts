import { z } from 'zod';
import { RequestValidationError } from '../errors.js';
import { page, single } from '../../spec/schemas/index.js';
import { Paginator, type Page, type PageQuery } from '../pagination.js';
import type { QueryValue, RequestOptions, Transport } from '../transport.js';
import { check } from '../validate.js';

/** What each resource module is built from. */
export interface ResourceContext {
  transport: Transport;
  /** Injected clock (ms since epoch), for checks such as "snoozed_until in the future". */
  now: () => number;
}

// The return types are spelled out: the inferred zod pipe types do not survive declaration emit
// (the .d.ts TypeScript writes for them does not compile in a consumer project).
/** `{data: T}` → T. */
export const one = <S extends z.ZodType>(s: S): z.ZodType<z.output<S>> => single(s).transform((r) => r.data as z.output<S>);
/** `{data: T[]}` (no paging) → T[]. */
export const all = <S extends z.ZodType>(s: S): z.ZodType<z.output<S>[]> =>
  z.looseObject({ data: z.array(s) }).transform((r) => r.data as z.output<S>[]);
/** Cursor page → {@link Page}. */
export const paged = <S extends z.ZodType>(s: S): z.ZodType<Page<z.output<S>>> =>
  page(s).transform((r): Page<z.output<S>> => ({ data: r.data, nextCursor: r.meta.next_cursor, perPage: r.meta.per_page }));

/** Integer id of a record in a path, encoded. */
export function idPath(op: string, field: string, id: number): string {
  if (!Number.isInteger(id) || id < 1) throw new RequestValidationError(field, 'a positive integer id', op);
  return String(id);
}

/** ISO string of a Date, or the string as given. */
export const iso = (v: string | Date | null | undefined): string | null | undefined => (v instanceof Date ? v.toISOString() : v);

/** A paginated GET with `per_page` checked (1–100) before anything is sent. */
export function listing<T>(
  ctx: ResourceContext,
  op: string,
  path: string,
  schema: z.ZodType<Page<T>>,
  query: Record<string, QueryValue> & PageQuery,
  options?: RequestOptions,
): Paginator<T> {
  check(op).perPage(query.per_page);
  const { cursor, ...rest } = query;
  return new Paginator<T>(
    (c) => ctx.transport.request({ op, method: 'GET', path, query: { ...rest, cursor: c }, schema, repeat: 'safe', options }),
    cursor,
  );
}
