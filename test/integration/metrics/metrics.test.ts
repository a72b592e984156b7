import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { register as globalRegistry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkError, QuotaExhaustedError, RateLimitedError } from '../../../src/api/errors.js';
import type { CallEvent } from '../../../src/api/transport.js';
import { createMetrics, type Metrics, createMetricsApp, DELIVERY_OUTCOMES } from '../../../src/metrics/index.js';
import { IngestBus } from '../../../src/lifecycle/ingest-bus.js';
import { LifecycleBus } from '../../../src/lifecycle/bus.js';
import type { DeliveryReport } from '../../../src/lifecycle/ingest-events.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE, ingestKeys } from '../../../src/queue/names.js';
import { pauseHandlers, resumeHandlers } from '../../../src/queue/pause.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { parseSamples, valueOf } from '../../support/prom-text.js';

const call = (over: Partial<CallEvent>): CallEvent => ({
  op: 'contacts.get',
  method: 'GET',
  path: '/contacts/1',
  idempotencyKey: undefined,
  body: undefined,
  attempt: 1,
  status: 200,
  durationMs: 12,
  rateLimitWaitMs: 0,
  priority: 'normal',
  replayed: false,
  rateLimitRemaining: undefined,
  quotaRemaining: undefined,
  error: undefined,
  willRetry: false,
  ...over,
});

const REQUEST = { method: 'POST', path: '/webhooks', route: '/webhooks' };
/** The ingest stream with the metrics' subscriber: `answer` emits one request's `answered`. */
function answering(metrics: Metrics): (report: DeliveryReport) => void {
  const bus = new IngestBus().subscribe(metrics.ingestSubscriber);
  return (report) => bus.emit({ type: 'answered', request: REQUEST, ok: true, status: 202, report });
}

describe('metrics: lifecycle subscribers and recorders to Prometheus text', () => {
  it('counts deliveries by outcome (every outcome present from the start), secret index and ingest latency', async () => {
    const metrics = createMetrics({ prefix: 'unused' });
    let s = parseSamples(await metrics.scrape());
    for (const outcome of DELIVERY_OUTCOMES) expect(valueOf(s, 'switchyard_deliveries_total', { outcome }), outcome).toBe(0);

    const onDelivery = answering(metrics);
    onDelivery({ outcome: 'accepted', ms: 0.4, secretIndex: 0, key: 'evt_1', event: 'message.received', bytes: 10 });
    onDelivery({ outcome: 'accepted', ms: 3, secretIndex: 1, key: 'evt_2' });
    onDelivery({ outcome: 'duplicate', ms: 0.7, secretIndex: 0, key: 'evt_1' });
    onDelivery({ outcome: 'bad_signature', ms: 0.2, reason: 'mismatch' });
    onDelivery({ outcome: 'unavailable', ms: 900 });

    const text = await metrics.scrape();
    s = parseSamples(text);
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'accepted' })).toBe(2);
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'duplicate' })).toBe(1);
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'bad_signature' })).toBe(1);
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'unavailable' })).toBe(1);
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'too_large' })).toBe(0);
    expect(valueOf(s, 'switchyard_signature_secret_index_total', { index: '0' })).toBe(2);
    expect(valueOf(s, 'switchyard_signature_secret_index_total', { index: '1' })).toBe(1);
    // 0.4 ms lands in the first (0.5 ms) bucket, 3 ms in 5 ms; 0.9 s under the 1 s bucket.
    expect(valueOf(s, 'switchyard_ingest_duration_seconds_bucket', { outcome: 'accepted', le: '0.0005' })).toBe(1);
    expect(valueOf(s, 'switchyard_ingest_duration_seconds_bucket', { outcome: 'accepted', le: '0.005' })).toBe(2);
    expect(valueOf(s, 'switchyard_ingest_duration_seconds_bucket', { outcome: 'unavailable', le: '0.5' })).toBe(0);
    expect(valueOf(s, 'switchyard_ingest_duration_seconds_bucket', { outcome: 'unavailable', le: '1' })).toBe(1);
    expect(valueOf(s, 'switchyard_ingest_duration_seconds_count', { outcome: 'accepted' })).toBe(2);
    // Delivery keys and event names are not labels.
    expect(text).not.toContain('evt_1');
    expect(text).toContain('# TYPE switchyard_ingest_duration_seconds histogram');
  });

  it('records handler runs, API calls, limiter waits, 429s, quota and the pause flag', async () => {
    const metrics = createMetrics({ prefix: 'unused' });
    const h = metrics.workerRecorder;
    expect(valueOf(parseSamples(await metrics.scrape()), 'switchyard_api_quota_remaining')).toBeUndefined();
    h.onHandler?.({ handler: 'lead-won', event: 'lead.won', outcome: 'completed', ms: 40 });
    h.onHandler?.({ handler: 'lead-won', event: 'lead.won', outcome: 'retry', ms: 2_000 });
    h.onHandler?.({ handler: 'away-reply', event: 'message.received', outcome: 'dead', ms: 3 });
    h.onApiCall?.(
      call({ op: 'contacts.get', status: 200, durationMs: 20, rateLimitWaitMs: 0, rateLimitRemaining: 29, quotaRemaining: 9_990 }),
    );
    h.onApiCall?.(
      call({
        op: 'tasks.create',
        method: 'POST',
        status: 429,
        durationMs: 5,
        rateLimitWaitMs: 1_500,
        willRetry: true,
        error: new RateLimitedError({ status: 429, message: 'slow down', retryAfterMs: 1_000 }),
      }),
    );
    h.onApiCall?.(
      call({
        op: 'tasks.create',
        method: 'POST',
        status: 201,
        durationMs: 30,
        rateLimitWaitMs: 7_000,
        priority: 'high',
        quotaRemaining: 9_989,
      }),
    );
    h.onApiCall?.(
      call({ op: 'contacts.get', status: 0, durationMs: 10, error: new NetworkError({ message: 'ECONNRESET' }), willRetry: true }),
    );
    h.onApiCall?.(
      call({
        op: 'contacts.get',
        status: 0,
        durationMs: 0,
        error: new QuotaExhaustedError({ status: 0, message: 'spent', resetAt: new Date() }),
      }),
    );

    let s = parseSamples(await metrics.scrape());
    expect(valueOf(s, 'switchyard_handler_runs_total', { handler: 'lead-won', event: 'lead.won', outcome: 'completed' })).toBe(1);
    expect(valueOf(s, 'switchyard_handler_runs_total', { handler: 'lead-won', event: 'lead.won', outcome: 'retry' })).toBe(1);
    expect(valueOf(s, 'switchyard_handler_runs_total', { handler: 'away-reply', event: 'message.received', outcome: 'dead' })).toBe(1);
    expect(
      valueOf(s, 'switchyard_handler_duration_seconds_bucket', { handler: 'lead-won', event: 'lead.won', outcome: 'retry', le: '2.5' }),
    ).toBe(1);
    expect(
      valueOf(s, 'switchyard_handler_duration_seconds_sum', { handler: 'lead-won', event: 'lead.won', outcome: 'completed' }),
    ).toBeCloseTo(0.04);

    expect(valueOf(s, 'switchyard_api_calls_total', { op: 'contacts.get', status: '200' })).toBe(1);
    expect(valueOf(s, 'switchyard_api_calls_total', { op: 'tasks.create', status: '429' })).toBe(1);
    expect(valueOf(s, 'switchyard_api_calls_total', { op: 'tasks.create', status: '201' })).toBe(1);
    expect(valueOf(s, 'switchyard_api_calls_total', { op: 'contacts.get', status: 'network_error' })).toBe(1);
    expect(valueOf(s, 'switchyard_api_calls_total', { op: 'contacts.get', status: 'quota_exhausted' })).toBe(1);
    expect(valueOf(s, 'switchyard_api_rate_limited_total', { op: 'tasks.create' })).toBe(1);
    expect(valueOf(s, 'switchyard_api_rate_limit_wait_seconds_count', { priority: 'normal' })).toBe(4);
    expect(valueOf(s, 'switchyard_api_rate_limit_wait_seconds_count', { priority: 'high' })).toBe(1);
    expect(valueOf(s, 'switchyard_api_rate_limit_wait_seconds_bucket', { priority: 'normal', le: '1' })).toBe(3);
    expect(valueOf(s, 'switchyard_api_rate_limit_wait_seconds_bucket', { priority: 'normal', le: '10' })).toBe(4);
    expect(valueOf(s, 'switchyard_api_rate_limit_wait_seconds_bucket', { priority: 'high', le: '1' })).toBe(0);
    expect(valueOf(s, 'switchyard_api_rate_limit_wait_seconds_bucket', { priority: 'high', le: '10' })).toBe(1);
    // contacts.get: the 200 and the network error were sent and timed; the locally refused call was not.
    expect(valueOf(s, 'switchyard_api_call_duration_seconds_count', { op: 'contacts.get' })).toBe(2);
    expect(valueOf(s, 'switchyard_api_quota_remaining')).toBe(9_989);
    expect(valueOf(s, 'switchyard_handlers_paused')).toBe(0);

    h.onPause?.('API token unusable (token_expired)');
    s = parseSamples(await metrics.scrape());
    expect(valueOf(s, 'switchyard_handlers_paused')).toBe(1);
    h.onPause?.(null);
    s = parseSamples(await metrics.scrape());
    expect(valueOf(s, 'switchyard_handlers_paused')).toBe(0);
  });

  it('never turns emails, phone numbers or tokens into label values', async () => {
    const metrics = createMetrics({ prefix: 'unused', defaultMetrics: false });
    const leaks = ['ana@example.com', '+15551234567', 'sk_live_abcdef', 'tok_ABC123', 'a'.repeat(80), 'Bearer xyz', 'x/y+z='];
    for (const leak of leaks) {
      metrics.workerRecorder.onHandler?.({ handler: leak, event: leak, outcome: 'completed', ms: 1 });
      metrics.workerRecorder.onApiCall?.(call({ op: leak }));
    }
    const text = await metrics.scrape();
    for (const leak of leaks) expect(text).not.toContain(leak);
    const s = parseSamples(text);
    expect(valueOf(s, 'switchyard_handler_runs_total', { handler: 'other', event: 'other', outcome: 'completed' })).toBe(leaks.length);
    expect(valueOf(s, 'switchyard_api_calls_total', { op: 'other', status: '200' })).toBe(leaks.length);
  });

  it('uses a private registry with the default process metrics, leaving the global one alone', async () => {
    const before = globalRegistry.getMetricsAsArray().length;
    const a = createMetrics({ prefix: 'a' });
    const b = createMetrics({ prefix: 'b' }); // a second registry in one process: no "already registered"
    answering(a)({ outcome: 'accepted', ms: 1 });
    expect(globalRegistry.getMetricsAsArray().length).toBe(before);
    const sa = parseSamples(await a.scrape());
    const sb = parseSamples(await b.scrape());
    expect(valueOf(sa, 'switchyard_deliveries_total', { outcome: 'accepted' })).toBe(1);
    expect(valueOf(sb, 'switchyard_deliveries_total', { outcome: 'accepted' })).toBe(0);
    expect(sa.some((x) => x.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(sa.some((x) => x.name === 'nodejs_heap_size_used_bytes')).toBe(true);
    expect(
      parseSamples(await createMetrics({ prefix: 'c', defaultMetrics: false }).scrape()).some((x) => x.name.startsWith('process_')),
    ).toBe(false);
    // Without Redis there is no queue state to report, rather than misleading zeros.
    expect(sa.some((x) => x.name === 'switchyard_queue_jobs' || x.name === 'switchyard_redis_up')).toBe(false);
  });

  it('subscribes beside other observers (delivery log, capture): one that throws silences none; counts spool drains', async () => {
    const metrics = createMetrics({ prefix: 'unused', defaultMetrics: false });
    const seen: DeliveryReport[] = [];
    const stored: string[] = [];
    const ingest = new IngestBus()
      .subscribe({
        answered: () => {
          throw new Error('a broken observer');
        },
      })
      .subscribe(metrics.ingestSubscriber)
      .subscribe({ answered: (e) => void (e.ok && seen.push(e.report)), stored: (e) => void stored.push(e.delivery.key) })
      .subscribe(undefined);
    ingest.emit({ type: 'answered', request: REQUEST, ok: true, status: 202, report: { outcome: 'spooled', ms: 2 } });
    ingest.emit({ type: 'answered', request: REQUEST, ok: false, error: new Error('the route threw') });
    ingest.emit({
      type: 'stored',
      delivery: { key: 'evt_9', name: null, bytes: new Uint8Array(), headers: {}, receivedAt: '' },
      ok: true,
      outcome: 'spooled',
    });
    ingest.emit({ type: 'drained', count: 4 });
    ingest.emit({ type: 'drained', count: 0 });
    expect(seen.map((r) => r.outcome)).toEqual(['spooled']);
    expect(stored).toEqual(['evt_9']);
    const pauses: Array<string | null> = [];
    const worker = new LifecycleBus().subscribe(metrics.workerSubscriber).subscribe({
      'attempt-ended': (e) => void (e.ok && e.decision.kind === 'pause' && pauses.push(e.decision.reason)),
    });
    const ref = {
      kind: 'handler' as const,
      queue: 'handlers',
      jobId: 'j1',
      key: 'evt_9',
      handler: 'h',
      event: 'lead.won',
      number: 1,
      attempts: 1,
      startedAt: 0,
      traceparent: undefined,
    };
    await worker.attempt(ref, async () => ({ kind: 'pause' as const, reason: 'token_expired', code: 'token_expired', at: '' }));

    const s = parseSamples(await metrics.scrape());
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'spooled' })).toBe(1);
    expect(valueOf(s, 'switchyard_spool_drained_total')).toBe(4);
    expect(valueOf(s, 'switchyard_handlers_paused')).toBe(1);
    expect(pauses).toEqual(['token_expired']);
  });

  it('serves /metrics (mounted or on its own app with /healthz)', async () => {
    const metrics = createMetrics({ prefix: 'unused' });
    const app = createMetricsApp(metrics);
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('switchyard_deliveries_total{outcome="accepted",workspace="default"} 0');
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/nope')).status).toBe(404);
  });
});

describe('metrics: queue depth, inbox and pause read from Redis on scrape (real redis-server)', () => {
  const prefix = uniquePrefix('metrics');
  let redis: Redis;
  let events: Queue;
  let handlers: Queue;
  const extra: Redis[] = [];

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    handlers = new Queue(HANDLERS_QUEUE, { connection: redis, prefix });
  });
  afterAll(async () => {
    await Promise.allSettled([events.close(), handlers.close()]);
    for (const c of [redis, ...extra]) c.disconnect();
  });

  it('reports job counts per queue and state, the inbox length and the shared pause state', async () => {
    await events.addBulk([
      { name: 'delivery', data: { n: 1 } },
      { name: 'delivery', data: { n: 2 } },
    ]);
    await handlers.add('run', { n: 3 }, { delay: 60_000 });
    await redis.rpush(ingestKeys(prefix).inbox, 'a', 'b', 'c');

    const metrics = createMetrics({ prefix, queues: { all: [events, handlers] }, redis, defaultMetrics: false });
    let s = parseSamples(await metrics.scrape());
    expect(valueOf(s, 'switchyard_redis_up')).toBe(1);
    expect(valueOf(s, 'switchyard_queue_jobs', { queue: 'events', state: 'waiting' })).toBe(2);
    expect(valueOf(s, 'switchyard_queue_jobs', { queue: 'events', state: 'failed' })).toBe(0);
    expect(valueOf(s, 'switchyard_queue_jobs', { queue: 'handlers', state: 'delayed' })).toBe(1);
    expect(valueOf(s, 'switchyard_queue_jobs', { queue: 'handlers', state: 'waiting' })).toBe(0);
    expect(valueOf(s, 'switchyard_ingest_inbox_length')).toBe(3);
    expect(valueOf(s, 'switchyard_handlers_paused')).toBe(0);

    // Paused by any process (here: directly in Redis): every process's scrape shows it.
    await pauseHandlers(redis, { high: handlers, normal: handlers, low: handlers }, prefix, {
      reason: 'token_expired',
      code: 'token_expired',
      at: new Date().toISOString(),
      tokenHash: null,
    });
    await redis.lpop(ingestKeys(prefix).inbox);
    s = parseSamples(await metrics.scrape());
    expect(valueOf(s, 'switchyard_handlers_paused')).toBe(1);
    expect(valueOf(s, 'switchyard_ingest_inbox_length')).toBe(2);
    await resumeHandlers(redis, { high: handlers, normal: handlers, low: handlers }, prefix);
    s = parseSamples(await metrics.scrape());
    expect(valueOf(s, 'switchyard_handlers_paused')).toBe(0);
  });

  it('binds sources after creation (the service opens its queues later)', async () => {
    const metrics = createMetrics({ prefix, defaultMetrics: false });
    expect(parseSamples(await metrics.scrape()).some((x) => x.name === 'switchyard_queue_jobs')).toBe(false);
    metrics.bind({ queues: { all: [events, handlers] }, redis });
    const s = parseSamples(await metrics.scrape());
    expect(valueOf(s, 'switchyard_queue_jobs', { queue: 'events', state: 'waiting' })).toBe(2);
    expect(valueOf(s, 'switchyard_redis_up')).toBe(1);
  });

  it('still answers quickly, with redis_up 0, when Redis does not', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    dead.on('error', () => {});
    extra.push(dead);
    const metrics = createMetrics({ prefix, redis: dead, defaultMetrics: false });
    metrics.workerRecorder.onPause?.('seen before Redis went away');
    const started = Date.now();
    const s = parseSamples(await metrics.scrape());
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(valueOf(s, 'switchyard_redis_up')).toBe(0);
    expect(valueOf(s, 'switchyard_handlers_paused')).toBe(1);
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'accepted' })).toBe(0);
  });
});
