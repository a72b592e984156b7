import { describe, expect, it } from 'vitest';
import {
  NetworkError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  OutcomeUnknownError,
  TimeoutError,
  UnexpectedResponseError,
  createApiClient,
  createMemoryRateLimiter,
  type CallEvent,
  type LimiterPriority,
  type RateLimiter,
} from '../../../src/api/index.js';
import { contact, fakeFetch, fakeTime } from '../../support/fake-fetch.js';

const TOKEN = 'sbx_secret_token_value';
const BASE = 'http://127.0.0.1:9/api/v1';

function client(handler: Parameters<typeof fakeFetch>[0], extra: Partial<Parameters<typeof createApiClient>[0]> = {}) {
  const f = fakeFetch(handler);
  const time = fakeTime();
  const events: CallEvent[] = [];
  const api = createApiClient({
    baseUrl: BASE,
    token: TOKEN,
    fetch: f.fetch,
    clock: time.clock,
    sleep: time.sleep,
    random: () => 0.5,
    onCall: (e) => events.push(e),
    ...extra,
  });
  return { api, calls: f.calls, time, events };
}

describe('transport', () => {
  it('sends the token only in the Authorization header, JSON both ways', async () => {
    const { api, calls } = client(() => ({ status: 201, body: { data: contact(5) } }));
    const c = await api.contacts.create({ name: 'Ada', email: 'ada@example.test' });
    expect(c.id).toBe(5);
    const req = calls[0]!;
    expect(req.url).toBe(`${BASE}/contacts`);
    expect(req.url).not.toContain(TOKEN);
    expect(req.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(req.headers.get('content-type')).toBe('application/json');
    expect(req.headers.get('accept')).toBe('application/json');
    expect(req.body).toEqual({ name: 'Ada', email: 'ada@example.test' });
  });

  it('requires https except on loopback hosts', () => {
    const make = (baseUrl: string) => () => createApiClient({ baseUrl, token: TOKEN });
    expect(make('http://example.com/api/v1')).toThrow(/https/);
    expect(make('http://10.0.0.1/api/v1')).toThrow(/https/);
    expect(make('https://example.com/api/v1')).not.toThrow();
    expect(make('http://localhost:3000/api/v1')).not.toThrow();
    expect(make('http://127.1.2.3:3000/api/v1')).not.toThrow();
    expect(make('http://[::1]:3000/api/v1')).not.toThrow();
    expect(make('https://example.com/api/v1?token=x')).toThrow(/query/);
  });

  it('never puts the token in error messages', async () => {
    const { api } = client(() => ({ status: 404, body: { message: 'Contact not found' } }));
    const err = await api.contacts.get(9).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(String((err as Error).message)).not.toContain(TOKEN);
    expect(JSON.stringify(err)).not.toContain(TOKEN);
  });

  it('encodes contact identifiers in the path', async () => {
    const { api, calls } = client(() => ({ body: { data: contact() } }));
    await api.contacts.get('email:a+b@example.test', { include: ['labels', 'lifecycle'] });
    expect(calls[0]!.url).toBe(`${BASE}/contacts/email%3Aa%2Bb%40example.test?include=labels%2Clifecycle`);
  });

  it('retries 5xx on an IK write with the same Idempotency-Key, honouring back-off', async () => {
    const { api, calls, time } = client((_, n) =>
      n < 3 ? { status: 503, body: { message: 'x' } } : { status: 201, body: { data: contact() } },
    );
    const r = await api.contacts.create({ name: 'Ada' }).withResponse();
    expect(r.attempts).toBe(3);
    const keys = calls.map((c) => c.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/[0-9a-f-]{36}/);
    expect(new Set(keys).size).toBe(1);
    expect(time.sleeps).toEqual([125, 250]); // full jitter at random()=0.5 of 250, 500
  });

  it('uses the caller key and reports a replay', async () => {
    const { api, calls } = client(() => ({ status: 201, body: { data: contact() }, headers: { 'idempotent-replay': 'true' } }));
    const r = await api.contacts.create({ name: 'Ada' }, { idempotencyKey: 'evt_1:h:step' }).withResponse();
    expect(calls[0]!.headers.get('idempotency-key')).toBe('evt_1:h:step');
    expect(r).toMatchObject({ replayed: true, status: 201, idempotencyKey: 'evt_1:h:step' });
    expect(r.data.id).toBe(1);
  });

  it('uses the injected key generator once per call', async () => {
    let n = 0;
    const { api, calls } = client((_, i) => (i === 1 ? new TypeError('fetch failed') : { status: 201, body: { data: contact() } }), {
      idempotencyKey: ({ op }) => `${op}-${++n}`,
    });
    await api.contacts.create({ name: 'Ada' });
    expect(calls.map((c) => c.headers.get('idempotency-key'))).toEqual(['contacts.create-1', 'contacts.create-1']);
  });

  it('reads carry no Idempotency-Key and are retried on network errors', async () => {
    const { api, calls } = client((_, n) => (n === 1 ? new TypeError('fetch failed') : { body: { data: contact() } }));
    await api.contacts.get(1);
    expect(calls).toHaveLength(2);
    expect(calls[0]!.headers.get('idempotency-key')).toBeNull();
  });

  it('never retries a write without an Idempotency-Key (leads.create)', async () => {
    const { api, calls } = client(() => ({ status: 500, body: { message: 'Server Error' } }));
    // A 5xx may have been applied: the error says so and is not retryable, so no layer above repeats it either.
    const err = await api.leads.create({ contact_id: 1, name: 'Lead' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ status: 500, code: 'outcome_unknown', retryable: false });
    expect((err as Error).cause).toBeInstanceOf(ServerError);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.headers.get('idempotency-key')).toBeNull();
  });

  it('a retried DELETE that finds the record gone counts as done (the first attempt was applied)', async () => {
    const { api, calls } = client((_, n) =>
      n === 1 ? { status: 503, body: { message: 'Server Error' } } : { status: 404, body: { message: 'Not found' } },
    );
    await expect(api.contacts.delete(5)).resolves.toBeUndefined();
    expect(calls).toHaveLength(2);
  });

  it('429: waits Retry-After (through the limiter pause) then retries', async () => {
    const { api, calls, time, events } = client((_, n) =>
      n === 1 ? { status: 429, body: { code: 'rate_limited' }, headers: { 'retry-after': '3' } } : { body: { data: contact() } },
    );
    await api.contacts.get(1);
    expect(calls).toHaveLength(2);
    expect(time.sleeps.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3000);
    expect(events.map((e) => [e.status, e.willRetry])).toEqual([
      [429, true],
      [200, false],
    ]);
    expect(events[0]!.error).toBeInstanceOf(RateLimitedError);
  });

  it('gives up after maxAttempts and throws the last error', async () => {
    const { api, calls } = client(() => ({ status: 502 }), { retry: { maxAttempts: 2 } });
    await expect(api.me()).rejects.toBeInstanceOf(ServerError);
    expect(calls).toHaveLength(2);
  });

  it('does not wait for a Retry-After longer than retry.maxMs', async () => {
    const { api, calls } = client(() => ({ status: 503, headers: { 'retry-after': '120' } }), { retry: { maxMs: 5000 } });
    await expect(api.me()).rejects.toBeInstanceOf(ServerError);
    expect(calls).toHaveLength(1);
  });

  it('times out a silent request with TimeoutError (retryable, retried)', async () => {
    const hang = (_: unknown, n: number) => (n === 1 ? new Promise<never>(() => undefined) : { body: { data: contact() } });
    const f = fakeFetch(hang);
    // The fake fetch ignores the signal: wrap it so an abort rejects like real fetch does.
    const fetch: typeof globalThis.fetch = (input, init) =>
      new Promise((resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
        f.fetch(input, init).then(resolve, reject);
      });
    const api = createApiClient({ baseUrl: BASE, token: TOKEN, fetch, timeoutMs: 50, retry: { baseMs: 1 } });
    const c = await api.contacts.get(1).withResponse();
    expect(c.attempts).toBe(2);
    const hangAlways = createApiClient({
      baseUrl: BASE,
      token: TOKEN,
      timeoutMs: 30,
      retry: { maxAttempts: 1 },
      fetch: (_i, init) => new Promise((_r, reject) => init?.signal?.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    const err = await hangAlways.me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as TimeoutError).retryable).toBe(true);
  });

  it('rejects an answer that does not match the spec', async () => {
    const { api } = client(() => ({ body: { data: { id: 'nope' } } }));
    await expect(api.contacts.get(1)).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  it('keeps unknown extra fields and money as decimal strings', async () => {
    const deal = {
      id: 1,
      name: 'D',
      pipeline: { id: 1, name: 'P' },
      stage: { id: 2, name: 'S' },
      status: 'open',
      amount: '1250.50',
      close_date: null,
      owner_id: null,
      organization_id: null,
      source: 'other',
      closed_at: null,
      closed_lost_reason: null,
      contact_ids: [1],
      created_at: '2026-01-01T00:00:00Z',
      future_field: { x: 1 },
    };
    const { api } = client(() => ({ body: { data: deal } }));
    const d = await api.deals.get(1);
    expect(d.amount).toBe('1250.50');
    expect(d['future_field']).toEqual({ x: 1 });
  });

  it('204 answers resolve to undefined', async () => {
    const { api, calls } = client(() => ({ status: 204 }));
    await expect(api.contacts.delete('phone:+15550001')).resolves.toBeUndefined();
    expect(calls[0]!.method).toBe('DELETE');
  });

  it('reports rate-limit and quota headers in withResponse and onCall', async () => {
    const { api, events } = client(() => ({
      body: { data: contact() },
      headers: {
        'x-ratelimit-limit': '30',
        'x-ratelimit-remaining': '29',
        'x-quota-limit': '1000',
        'x-quota-remaining': '10',
        'x-quota-reset': '2026-04-01T00:00:00Z',
      },
    }));
    const r = await api.contacts.get(1).withResponse();
    expect(r.rateLimit).toMatchObject({ limit: 30, remaining: 29, quotaLimit: 1000, quotaRemaining: 10 });
    expect(events[0]).toMatchObject({ op: 'contacts.get', status: 200, rateLimitRemaining: 29, quotaRemaining: 10 });
  });

  it("passes the client's priority to every acquire and reports it in CallEvent (default normal)", async () => {
    const asked: (LimiterPriority | undefined)[] = [];
    const inner = createMemoryRateLimiter({ burst: 10 });
    const spy: RateLimiter = {
      ...inner,
      acquire: (signal, priority) => {
        asked.push(priority);
        return inner.acquire(signal, priority);
      },
    };
    const high = client((_, n) => (n === 1 ? { status: 503 } : { body: { data: contact() } }), { rateLimiter: spy, priority: 'high' });
    await high.api.contacts.get(1);
    expect(asked).toEqual(['high', 'high']); // the retry asks again, at the same priority
    expect(high.events.map((e) => e.priority)).toEqual(['high', 'high']);

    asked.length = 0;
    const plain = client(() => ({ body: { data: contact() } }), { rateLimiter: spy });
    await plain.api.contacts.get(1);
    expect(asked).toEqual(['normal']);
    expect(plain.events[0]!.priority).toBe('normal');
  });

  it('refuses an unknown priority', () => {
    expect(() => createApiClient({ baseUrl: BASE, token: TOKEN, priority: 'urgent' as LimiterPriority })).toThrow(
      /priority must be one of high, normal, low/,
    );
  });
});
