/**
 * HTTP header names of the API spec (Limits, Idempotency, Errors), spelt as the
 * spec writes them; header names are case-insensitive on the wire.
 */
export const HEADERS = {
  /** On a write: makes a repeat with the same key return the first answer. */
  idempotencyKey: 'Idempotency-Key',
  /** `true` on an answer replayed for a repeated Idempotency-Key. */
  idempotentReplay: 'Idempotent-Replay',
  /** Seconds (or an HTTP date) to wait after a 429 or 503. */
  retryAfter: 'Retry-After',
  rateLimitLimit: 'X-RateLimit-Limit',
  rateLimitRemaining: 'X-RateLimit-Remaining',
  /** The monthly allowance headers; plans without a monthly cap send none. */
  quotaLimit: 'X-Quota-Limit',
  quotaRemaining: 'X-Quota-Remaining',
  quotaReset: 'X-Quota-Reset',
} as const;
