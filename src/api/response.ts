import { HEADERS } from '../spec/index.js';

/** Rate-limit state reported by an answer's headers (absent headers stay undefined). */
export interface RateLimitInfo {
  /** `X-RateLimit-Limit`: the burst limit per 10 s. */
  limit: number | undefined;
  /** `X-RateLimit-Remaining`. */
  remaining: number | undefined;
  /** `X-Quota-Limit` (plans without a monthly cap send none). */
  quotaLimit: number | undefined;
  /** `X-Quota-Remaining`. */
  quotaRemaining: number | undefined;
  /** `X-Quota-Reset`. */
  quotaResetAt: Date | undefined;
}

/**
 * A successful answer with its metadata, from `.withResponse()` on any call.
 *
 * @example
 * const { data: contact, replayed } = await api.contacts.create({ name: 'Ada' }).withResponse();
 */
export interface ApiResponse<T> {
  /** The parsed record (the `data` of `{data: …}`), or undefined for 204 answers. */
  data: T;
  /** HTTP status (e.g. 201 created, 200 existing/updated). */
  status: number;
  /** True when the service answered `Idempotent-Replay: true`: the work was done by an earlier request with this key. */
  replayed: boolean;
  /** Idempotency-Key sent (caller's or generated); undefined on operations that take none. */
  idempotencyKey: string | undefined;
  /** `X-Request-Id`, when the service sent one. */
  requestId: string | undefined;
  rateLimit: RateLimitInfo;
  /** Attempts made (1 when the first try succeeded). */
  attempts: number;
  headers: Headers;
}

/**
 * What every client method returns: a promise of the record itself, plus
 * `.withResponse()` for the status, the replay flag and the rate-limit headers.
 *
 * @example
 * const msg = await api.messages.sendText(42, 'Hello');           // the Message
 * const r = await api.messages.sendText(42, 'Hello', { idempotencyKey: 'k1' }).withResponse();
 * if (r.replayed) log('already sent');
 */
export type ApiPromise<T> = Promise<T> & {
  /** The same call, resolving to the record and its metadata (one request: both share it). */
  withResponse(): Promise<ApiResponse<T>>;
};

/** Wraps a response promise as an {@link ApiPromise}. */
export function apiPromise<T>(inner: Promise<ApiResponse<T>>): ApiPromise<T> {
  const p = inner.then((r) => r.data) as ApiPromise<T>;
  // Callers who use only `.withResponse()` never await `p`; keep its rejection from
  // becoming an unhandled rejection (it is still delivered to whoever awaits `p`).
  p.catch(() => undefined);
  p.withResponse = () => inner;
  return p;
}

function intHeader(h: Headers, name: string): number | undefined {
  const v = h.get(name);
  if (v === null || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** Reads the rate-limit and quota headers. */
export function rateLimitInfo(h: Headers, parseReset: (v: string | null) => Date | undefined): RateLimitInfo {
  return {
    limit: intHeader(h, HEADERS.rateLimitLimit),
    remaining: intHeader(h, HEADERS.rateLimitRemaining),
    quotaLimit: intHeader(h, HEADERS.quotaLimit),
    quotaRemaining: intHeader(h, HEADERS.quotaRemaining),
    quotaResetAt: parseReset(h.get(HEADERS.quotaReset)),
  };
}
