/**
 * Every error class produced by a real sandbox answer (or, for network errors,
 * a real socket), through the client.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ForbiddenError,
  IdempotencyInFlightError,
  IdempotencyKeyReusedError,
  LegacyKeyRetiredError,
  NetworkError,
  NotFoundError,
  PlanLimitError,
  QuotaExhaustedError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  TokenExpiredError,
  UnauthorizedError,
  ValidationError,
  type ApiClient,
  type CallEvent,
} from '../../../src/api/index.js';
import { TOKENS, startSandbox, type SandboxHarness } from '../../support/sandbox.js';

let h: SandboxHarness;
let api: ApiClient;
const once = { retry: { maxAttempts: 1 } } as const;

beforeAll(async () => {
  h = await startSandbox();
  api = h.client(once);
});
beforeEach(async () => {
  await h.hook('POST', '/reset');
});
afterAll(async () => {
  await h.close();
});

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('error classes from real sandbox answers', () => {
  it('400 BadRequestError: a token query parameter is refused', async () => {
    const err = await caught(api.contacts.list({ token: 'x' } as never).firstPage());
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, retryable: false });
  });

  it('401 UnauthorizedError: unknown token', async () => {
    const err = await caught(h.client({ ...once, token: 'sbx_nope' }).me());
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(err).not.toBeInstanceOf(TokenExpiredError);
    expect(String((err as Error).message)).not.toContain('sbx_nope');
  });

  it('401 TokenExpiredError: token past its date', async () => {
    const err = await caught(h.client({ ...once, token: TOKENS.expired }).me());
    expect(err).toBeInstanceOf(TokenExpiredError);
    expect(err).toMatchObject({ status: 401, code: 'token_expired', retryable: false });
  });

  it('403 ForbiddenError: a read-only token writing', async () => {
    const err = await caught(h.client({ ...once, token: TOKENS.read }).contacts.create({ name: 'X' }));
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(err).not.toBeInstanceOf(LegacyKeyRetiredError);
  });

  it('403 LegacyKeyRetiredError after the retirement date', async () => {
    await h.hook('POST', '/legacy-retirement', { retired: true });
    const err = await caught(h.client({ ...once, token: TOKENS.legacy }).me());
    expect(err).toBeInstanceOf(LegacyKeyRetiredError);
    expect(err).toMatchObject({ status: 403, code: 'legacy_key_retired' });
  });

  it("404 NotFoundError: another workspace's record, and PUT id:<unissued>", async () => {
    const [own] = await h.client().contacts.list().toArray();
    expect(await caught(h.client({ ...once, token: TOKENS.other }).contacts.get(own!.id))).toBeInstanceOf(NotFoundError);
    expect(await caught(api.contacts.upsert('id:999999', { name: 'Nobody' }))).toBeInstanceOf(NotFoundError);
  });

  it('422 ValidationError with the errors map (a label that does not exist)', async () => {
    const err = await caught(api.contacts.labels.add('email:alice@example.com', ['no-such-label']));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).not.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(Object.keys((err as ValidationError).errors).length).toBeGreaterThan(0);
  });

  it('422 IdempotencyKeyReusedError: same key, different body', async () => {
    const key = `reuse-${Date.now()}`;
    await api.contacts.create({ name: 'First' }, { idempotencyKey: key });
    const err = await caught(api.contacts.create({ name: 'Second' }, { idempotencyKey: key }));
    expect(err).toBeInstanceOf(IdempotencyKeyReusedError);
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ status: 422, retryable: false });
  });

  it('409 IdempotencyInFlightError: a concurrent request with the same key', async () => {
    await h.hook('POST', '/faults', { path: '/contacts', method: 'POST', latency_ms: 400, count: 1 });
    const key = `inflight-${Date.now()}`;
    const slow = api.contacts.create({ name: 'Slow' }, { idempotencyKey: key });
    await new Promise((r) => setTimeout(r, 100));
    const err = await caught(api.contacts.create({ name: 'Slow' }, { idempotencyKey: key }));
    expect(err).toBeInstanceOf(IdempotencyInFlightError);
    expect(err).toMatchObject({ status: 409, retryable: true });
    await slow;
  });

  it('409 is retried with the same key and ends in a replay', async () => {
    await h.hook('POST', '/faults', { path: '/contacts', method: 'POST', latency_ms: 300, count: 1 });
    const key = `inflight-retry-${Date.now()}`;
    const retrying = h.client({ retry: { maxAttempts: 6, baseMs: 200 } });
    const slow = retrying.contacts.create({ name: 'Slow' }, { idempotencyKey: key }).withResponse();
    await new Promise((r) => setTimeout(r, 50));
    const second = await retrying.contacts.create({ name: 'Slow' }, { idempotencyKey: key }).withResponse();
    const first = await slow;
    expect(second.attempts).toBeGreaterThan(1);
    expect(second.replayed).toBe(true);
    expect(second.data.id).toBe(first.data.id);
  });

  it('429 RateLimitedError with retryAfterMs (burst spent)', async () => {
    await h.hook('POST', '/burst', { burst: 2 });
    const noLimiter = h.client({ ...once, rateLimiter: false });
    await noLimiter.me();
    await noLimiter.me();
    const err = await caught(noLimiter.me());
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(0);
    expect((err as RateLimitedError).retryAfterMs).toBeLessThanOrEqual(10_000);
    expect(err).toMatchObject({ retryable: true });
    await h.hook('POST', '/burst', { burst: 10_000 });
  });

  it('429 is retried after Retry-After and every process pauses', async () => {
    await h.hook('POST', '/faults', { path: '/me', force_429: true, count: 1 });
    const events: CallEvent[] = [];
    const client = h.client({ onCall: (e) => events.push(e) });
    const started = Date.now();
    await client.me();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950); // Retry-After: 1
    expect(events.map((e) => e.status)).toEqual([429, 200]);
  });

  it('429 QuotaExhaustedError with the reset time; then refused locally without a call', async () => {
    await h.hook('POST', '/quota', { limit: 1, used: 1 });
    const client = h.client(once);
    const err = await caught(client.me());
    expect(err).toBeInstanceOf(QuotaExhaustedError);
    const resetAt = (err as QuotaExhaustedError).resetAt;
    const now = new Date();
    expect(resetAt.getTime()).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    await h.hook('DELETE', '/requests');
    expect(await caught(client.me())).toBeInstanceOf(QuotaExhaustedError);
    expect(await h.hook<unknown[]>('GET', '/requests')).toHaveLength(0);
  });

  it('500 ServerError (retryable) and retried to success', async () => {
    await h.hook('POST', '/faults', { path: '/me', error_rate: 1, count: 1 });
    const err = await caught(api.me());
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ status: 500, retryable: true });
    await h.hook('POST', '/faults', { path: '/me', error_rate: 1, count: 2 });
    const r = await h.client().me().withResponse();
    expect(r.attempts).toBe(3);
  });

  it('402 PlanLimitError (a plan allowance is spent), not retried', async () => {
    await h.hook('POST', '/faults', { path: '/contacts', method: 'POST', plan_limit: true, count: 1 });
    const err = await caught(h.client().contacts.create({ name: 'Over the limit' }));
    expect(err).toBeInstanceOf(PlanLimitError);
    expect(err).toMatchObject({ status: 402, code: 'plan_limit', retryable: false });
    const calls = await h.hook<unknown[]>('GET', '/requests?method=POST&path=/contacts');
    expect(calls).toHaveLength(1);
  });

  it('TimeoutError when the sandbox is slower than timeoutMs', async () => {
    await h.hook('POST', '/faults', { path: '/me', latency_ms: 500, count: 1 });
    const err = await caught(h.client({ ...once, timeoutMs: 100 }).me());
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ status: 0, retryable: true });
  });

  it('NetworkError when nothing listens', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const client = h.client({ ...once, baseUrl: `http://127.0.0.1:${port}/api/v1` });
    const err = await caught(client.me());
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).not.toBeInstanceOf(TimeoutError);
    expect(String((err as Error).message)).not.toContain(TOKENS.full);
  });
});
