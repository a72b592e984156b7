import { describe, expect, it } from 'vitest';
import {
  ApiError,
  BadRequestError,
  ForbiddenError,
  IdempotencyInFlightError,
  IdempotencyKeyReusedError,
  LegacyKeyRetiredError,
  NotFoundError,
  PlanLimitError,
  QuotaExhaustedError,
  RateLimitedError,
  ServerError,
  TokenExpiredError,
  UnauthorizedError,
  ValidationError,
  errorFromResponse,
} from '../../../src/api/index.js';

const NOW = Date.parse('2026-03-15T12:00:00Z');
const map = (status: number, body: unknown = {}, headers: Record<string, string> = {}, hadIdempotencyKey = false) =>
  errorFromResponse({ status, body, headers: new Headers(headers), hadIdempotencyKey, op: 'x.y', nowMs: NOW });

describe('errorFromResponse (one status+code → class mapping)', () => {
  it.each([
    [400, {}, BadRequestError, false],
    [401, {}, UnauthorizedError, false],
    [401, { code: 'token_expired' }, TokenExpiredError, false],
    [402, {}, PlanLimitError, false],
    [403, {}, ForbiddenError, false],
    [403, { code: 'legacy_key_retired' }, LegacyKeyRetiredError, false],
    [404, {}, NotFoundError, false],
    [409, {}, IdempotencyInFlightError, true],
    [422, { errors: { name: ['required'] } }, ValidationError, false],
    [500, {}, ServerError, true],
    [503, {}, ServerError, true],
  ] as const)('%i %j → %o', (status, body, cls, retryable) => {
    const e = map(status, body);
    expect(e).toBeInstanceOf(cls);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(status);
    expect(e.retryable).toBe(retryable);
  });

  it('keeps the 422 errors map and the service code', () => {
    const e = map(422, { message: 'The given data was invalid.', errors: { name: ['too long'] } });
    expect(e).toBeInstanceOf(ValidationError);
    expect((e as ValidationError).errors).toEqual({ name: ['too long'] });
    expect(e.message).toContain('The given data was invalid.');
  });

  it('422 is a reused key only when the request carried one and the answer names it', () => {
    const body = { code: 'idempotency_key_reused', errors: { 'Idempotency-Key': ['used'] } };
    expect(map(422, body, {}, true)).toBeInstanceOf(IdempotencyKeyReusedError);
    expect(map(422, { errors: { idempotency_key: ['used'] } }, {}, true)).toBeInstanceOf(IdempotencyKeyReusedError);
    expect(map(422, body, {}, false)).not.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(map(422, { errors: { name: ['x'] } }, {}, true)).not.toBeInstanceOf(IdempotencyKeyReusedError);
  });

  it('429 burst → RateLimitedError with retryAfterMs', () => {
    const e = map(429, { code: 'rate_limited' }, { 'retry-after': '7', 'x-ratelimit-remaining': '0' });
    expect(e).toBeInstanceOf(RateLimitedError);
    expect((e as RateLimitedError).retryAfterMs).toBe(7000);
    expect(e.retryable).toBe(true);
  });

  it('429 with quota remaining 0 → QuotaExhaustedError with resetAt, not retryable', () => {
    const e = map(429, {}, { 'retry-after': '1000000', 'x-quota-remaining': '0', 'x-quota-reset': '2026-04-01T00:00:00.000Z' });
    expect(e).toBeInstanceOf(QuotaExhaustedError);
    expect((e as QuotaExhaustedError).resetAt.toISOString()).toBe('2026-04-01T00:00:00.000Z');
    expect(e.retryable).toBe(false);
  });

  it('429 whose Retry-After points weeks ahead is the quota even without quota headers', () => {
    const e = map(429, {}, { 'retry-after': String(14 * 86400) });
    expect(e).toBeInstanceOf(QuotaExhaustedError);
    expect((e as QuotaExhaustedError).resetAt.getTime()).toBe(NOW + 14 * 86400_000);
  });

  it('Retry-After on a 503 is kept for the retry loop', () => {
    expect(map(503, undefined, { 'retry-after': '2' }).retryAfterMs).toBe(2000);
  });
});
