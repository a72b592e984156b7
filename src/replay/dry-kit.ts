import { z } from 'zod';
import type { HttpMethod } from '../api/index.js';

/**
 * What the answers of `replay --inline --dry-run` are built from: the request,
 * the clock, dry ids, reads of the API (overlaid by this run's own writes),
 * and helpers that read a request body without trusting its types.
 */

/** A request body as the builders read it: the JSON object sent (anything else reads as empty). */
export type Body = Readonly<Record<string, unknown>>;

/** An answer to a read (the API's, or this run's own record): status 0 when there was no answer. */
export interface Lookup {
  status: number;
  json: unknown;
  headers?: Headers;
}

/** What a shape builder may use. */
export interface DryEnv {
  /** The clock, as an ISO timestamp. */
  now(): string;
  /** A new dry id: {@link DRY_ID_BASE} + 1, + 2, … (positive, so it can address later calls). */
  nextId(): number;
  /**
   * Reads an API path (segments not encoded): a GET, or with `body` a read
   * POST (`/contacts/search`). Records this run wrote are answered from
   * memory (a deleted one: 404) and not read from the API.
   */
  read(path: string, opts?: { query?: Record<string, string>; body?: unknown }): Promise<Lookup>;
  /** The record this run wrote at `path` (null: it deleted it), or undefined. */
  own(path: string): unknown;
  /** The token's teammate id (`GET /me`, once per run), null when unknown. */
  teammateId(): Promise<number | null>;
  /** Keeps what this run wrote at `path` (null: deleted) for later reads and writes of it. */
  remember(path: string, record: unknown): void;
}

/** A synthesized answer: status and JSON body (none for 204). */
export interface DryAnswer {
  status: number;
  body?: unknown;
}

/** One write operation of the API: how its answer is built. */
export interface DryRoute {
  method: Exclude<HttpMethod, 'GET'>;
  /** Path below the base URL with `:name` segments, e.g. `/contacts/:ref/labels`. */
  pattern: string;
  /** The client's operation name (`contacts.create`). */
  op: string;
  /** Builds the answer; `params` are the decoded `:name` segments in order. */
  answer(params: readonly string[], body: Body, env: DryEnv): Promise<DryAnswer>;
}

/** Dry ids start above this, far beyond the ids of a real workspace and still exact in JSON. */
export const DRY_ID_BASE = 999_000_000_000;

/** The record of a 2xx `{data: …}` answer when it matches `schema`, else undefined. */
export function found<S extends z.ZodType>(l: Lookup, schema: S): z.output<S> | undefined {
  if (l.status < 200 || l.status > 299 || typeof l.json !== 'object' || l.json === null) return undefined;
  const r = schema.safeParse((l.json as { data?: unknown }).data);
  return r.success ? r.data : undefined;
}

/** The records of a 2xx `{data: [...]}` answer that match `schema` (others dropped), else undefined. */
export function foundList<S extends z.ZodType>(l: Lookup, schema: S): z.output<S>[] | undefined {
  if (l.status < 200 || l.status > 299 || typeof l.json !== 'object' || l.json === null) return undefined;
  const data = (l.json as { data?: unknown }).data;
  if (!Array.isArray(data)) return undefined;
  return data.flatMap((d) => {
    const r = schema.safeParse(d);
    return r.success ? [r.data] : [];
  });
}

/** The API's own answer to a read of a record that does not exist, passed on as the write's answer. */
export const notFound = (l: Lookup): DryAnswer => ({ status: 404, body: l.json ?? { message: 'Not found' } });

/** A 422 naming the field whose value names nothing (as the service answers it). */
export const unprocessable = (field: string, what: string): DryAnswer => ({
  status: 422,
  body: { message: `The ${field} does not exist.`, errors: { [field]: [what] } },
});

/** `{data: record}` with `status`. */
export const data = (status: number, record: unknown): DryAnswer => ({ status, body: { data: record } });

/** A string field, else undefined. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A reference the request gave as text or a number (`email:a@x`, `36`), as text; '' for anything else. */
export const refText = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
/** An integer field, else undefined. */
export const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

/** A nullable field as sent: its value (null kept), or undefined when absent or of another type. */
export function nullable<T>(b: Body, key: string, pick: (v: unknown) => T | undefined): T | null | undefined {
  if (!(key in b)) return undefined;
  return b[key] === null ? null : pick(b[key]);
}

/** `cur` with every key of `patch` whose value is not undefined. */
export function overlay<T extends object>(cur: T, patch: Record<string, unknown>): T {
  const out = { ...cur } as Record<string, unknown>;
  for (const [k, v] of Object.entries(patch)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** Cents as the API answers amounts: a string with two decimals. */
export const money = (cents: number): string => {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(Math.round(cents));
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
};
/** Cents of a request number (undefined/null: 0). */
export const cents = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v * 100) : 0);
/** Cents of an answered decimal string. */
export const centsOf = (s: string): number => Math.round(Number.parseFloat(s) * 100);

/** An id path segment as a number (`36` or `id:36`), else undefined. */
export function refId(ref: string): number | undefined {
  const m = /^(?:id:)?(\d+)$/.exec(ref);
  return m ? Number(m[1]) : undefined;
}
