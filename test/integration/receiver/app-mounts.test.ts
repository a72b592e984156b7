import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { IngestBus } from '../../../src/lifecycle/ingest-bus.js';
import { createMetrics } from '../../../src/metrics/index.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { createReceiverApp } from '../../../src/receiver/app.js';
import type { DeliverySink } from '../../../src/queue/delivery.js';
import { sign } from '../../../src/events/signature.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { parseSamples, valueOf } from '../../support/prom-text.js';

/** The receiver app with /metrics and /admin mounted through its `extend` option, as the service wires them. */
describe('receiver app with metrics and admin mounted', () => {
  const prefix = uniquePrefix('wiring');
  const admin = { user: 'ops', password: 'wiring-pw' };
  const auth = { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` };
  let redis: Redis;
  let events: Queue;
  let handlers: Queue;

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    handlers = new Queue(HANDLERS_QUEUE, { connection: redis, prefix });
  });
  afterAll(async () => {
    await Promise.allSettled([events.close(), handlers.close()]);
    redis.disconnect();
  });

  function app(withAdmin: boolean) {
    const metrics = createMetrics({ prefix, queues: { all: [events, handlers] }, redis, defaultMetrics: false });
    const seen = new Set<string>();
    const sink: DeliverySink = { put: async (d) => (seen.has(d.key) ? 'duplicate' : (seen.add(d.key), 'accepted')) };
    const receiver = createReceiverApp({
      webhookPath: '/webhooks',
      config: {
        webhookSecrets: ['whsec-now-8c1d', 'whsec-old-41fa'],
        signatureHeader: 'x-service-signature',
        maxBodyBytes: 1024,
        bodyTimeoutMs: 1000,
      },
      sink,
      log: createLogger({ level: 'silent' }),
      ingest: new IngestBus().subscribe(metrics.ingestSubscriber),
      readiness: async () => ({ ready: true, details: {} }),
      extend: (a) => {
        metrics.mount(a);
        mountAdmin(a, { queues: [events, handlers], admin: withAdmin ? admin : undefined });
      },
    });
    return { receiver, metrics };
  }

  it('counts real webhook requests by outcome and secret index, and serves them at /metrics', async () => {
    const { receiver } = app(true);
    const body = '{"id":"evt_wire_1","event":"message.received","data":{}}';
    const post = (secret: string) =>
      receiver.request('/webhooks', { method: 'POST', body, headers: { 'x-service-signature': sign(secret, Buffer.from(body)) } });
    expect((await post('whsec-old-41fa')).status).toBe(202);
    expect((await post('whsec-now-8c1d')).status).toBe(200);
    expect((await post('wrong')).status).toBe(401);

    const res = await receiver.request('/metrics');
    expect(res.status).toBe(200);
    const text = await res.text();
    const s = parseSamples(text);
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'accepted' })).toBe(1);
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'duplicate' })).toBe(1);
    expect(valueOf(s, 'switchyard_deliveries_total', { outcome: 'bad_signature' })).toBe(1);
    expect(valueOf(s, 'switchyard_signature_secret_index_total', { index: '1' })).toBe(1);
    expect(valueOf(s, 'switchyard_signature_secret_index_total', { index: '0' })).toBe(1);
    expect(valueOf(s, 'switchyard_queue_jobs', { queue: 'handlers', state: 'failed' })).toBe(0);
    for (const secret of ['whsec-now-8c1d', 'whsec-old-41fa', 'evt_wire_1']) expect(text).not.toContain(secret);
  });

  it('keeps the receiver fallbacks: unknown paths under /admin are 404 behind auth, /admin is 404 when off', async () => {
    const on = app(true).receiver;
    const challenge = await on.request('/admin');
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('www-authenticate')).toMatch(/^Basic /);
    expect((await on.request('/admin/api/queues', { headers: { Authorization: 'Basic Zm9vOmJhcg==' } })).status).toBe(401);
    expect((await on.request('/admin', { headers: auth })).status).toBe(200);
    const unknown = await on.request('/admin/no/such/page', { headers: auth });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });

    const off = app(false).receiver;
    const res = await off.request('/admin', { headers: auth });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: 'not_found' });
    expect((await off.request('/metrics')).status).toBe(200);
  });
});
