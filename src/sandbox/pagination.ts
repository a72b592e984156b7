import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { PER_PAGE } from '../spec/index.js';
import { ApiError } from './errors.js';

/** A page as the API answers it: `{data, meta: {next_cursor, per_page}}`. */
export interface Page<T> {
  data: T[];
  meta: { next_cursor: string | null; per_page: number };
}

/** Sort key: ascending tuple order is page order (newest first uses negated times). */
export type SortKey = readonly number[];

/** Validates `per_page` (from query string or body); out of 1..100 is a 422. */
export function perPage(raw: unknown): number {
  if (raw === undefined || raw === null || raw === '') return PER_PAGE.default;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < PER_PAGE.min || n > PER_PAGE.max) {
    throw new ApiError(422, 'The given data was invalid.', undefined, {
      per_page: [`must be an integer from ${PER_PAGE.min} to ${PER_PAGE.max}`],
    });
  }
  return n;
}

function compare(a: SortKey, b: SortKey): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Every collection sorts on two whole numbers (a time, then the id): a cursor holds the pair of the last record sent. */
const KEY_LENGTH = 2;

/**
 * Cursors carry a tag: the first 12 bytes of an HMAC of the sort key under a
 * key drawn when this process loads. A well-formed pair the sandbox never
 * sent (`[-1,2]`, or a key edited by hand) is therefore told apart from one it
 * issued. The key is not kept: a cursor taken before a restart of the sandbox
 * (also `dev --keep-sandbox`) is refused, and the caller starts from page one.
 */
const CURSOR_KEY = randomBytes(32);

const tagOf = (payload: string): Buffer => createHmac('sha256', CURSOR_KEY).update(payload).digest().subarray(0, 12);

const encode = (key: SortKey): string => {
  const payload = Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
  return `${payload}.${tagOf(payload).toString('base64url')}`;
};

/** The pair a payload holds, when it is the exact encoding of two whole numbers; null otherwise. */
function pairOf(payload: string): SortKey | null {
  try {
    const key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(key) || key.length !== KEY_LENGTH || !key.every((k) => Number.isSafeInteger(k))) return null;
    const pair = key as number[];
    return Buffer.from(JSON.stringify(pair), 'utf8').toString('base64url') === payload ? pair : null;
  } catch {
    return null;
  }
}

/** Whether `tag` is the tag this process gives `payload` (compared in constant time). */
function tagged(payload: string, tag: string): boolean {
  const given = Buffer.from(tag, 'base64url');
  const expected = tagOf(payload);
  return given.length === expected.length && given.toString('base64url') === tag && timingSafeEqual(given, expected);
}

/**
 * The sort key a cursor holds. Only a cursor this sandbox issued is read: its
 * payload is the exact encoding of a pair of whole numbers and its tag is the
 * one this process gave it (`W10`, a pair it never sent, an edited cursor or
 * one from before a restart is refused with 422, never answered with an empty page).
 */
function decode(cursor: string): SortKey {
  const [payload = '', tag = '', ...extra] = cursor.split('.');
  const pair = extra.length === 0 ? pairOf(payload) : null;
  if (pair && tagged(payload, tag)) return pair;
  throw new ApiError(422, 'The given data was invalid.', undefined, {
    cursor: ['is not a cursor this API issued; pass meta.next_cursor of the previous page as it came'],
  });
}

/**
 * Keyset pagination: the opaque cursor is the sort key of the last record
 * sent, so records created between pages neither repeat nor shift the pages.
 */
export function paginate<T, V>(
  items: Iterable<T>,
  key: (item: T) => SortKey,
  view: (item: T) => V,
  opts: { perPage: number; cursor?: string | undefined },
): Page<V> {
  const sorted = [...items].sort((a, b) => compare(key(a), key(b)));
  const after = opts.cursor ? decode(opts.cursor) : null;
  const rest = after ? sorted.filter((i) => compare(key(i), after) > 0) : sorted;
  const slice = rest.slice(0, opts.perPage);
  const last = slice[slice.length - 1];
  const next = rest.length > opts.perPage && last !== undefined ? encode(key(last)) : null;
  return { data: slice.map(view), meta: { next_cursor: next, per_page: opts.perPage } };
}

/** Newest first (spec: collections are newest first unless stated); ties by id. */
export const newestFirst = (r: { createdAt: number; id: number }): SortKey => [-r.createdAt, -r.id];
