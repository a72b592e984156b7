import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/events/envelope.js';
import { EVENTS_QUEUE } from '../../../src/queue/names.js';
import { deliveryId, eventBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, startTestService, waitFor } from '../../support/service.js';

describe('ingest into Redis (real redis-server)', () => {
  const prefix = uniquePrefix('ingest');
  let service: Awaited<ReturnType<typeof startTestService>>;
  let redis: Redis;
  /** Job data: a StoredDelivery (src/queue/delivery.ts); the fields read here. */
  let events: Queue<{ key: string; body?: string }>;

  beforeAll(async () => {
    service = await startTestService({ REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix });
    redis = new Redis(testRedisUrl());
    events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
  });
  afterAll(async () => {
    await service.close();
    await events.close();
    redis.disconnect();
  });

  it('queues exactly one job for a signed delivery and answers the same bytes with 200 duplicate', async () => {
    const body = eventBody('conversation.closed');
    const id = deliveryId(body);
    expect((await deliver(service.url, body)).status).toBe(202);
    const again = await deliver(service.url, body);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: 'duplicate', delivery: id });
    const job = await waitFor(() => events.getJob(jobIdFor(id)));
    expect(job.name).toBe('conversation.closed');
    expect(job.data).toMatchObject({ key: id, name: 'conversation.closed', body, secretIndex: 0 });
    await new Promise((r) => setTimeout(r, 200));
    const all = await events.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed']);
    expect(all.filter((j) => j.data.key === id)).toHaveLength(1);
  });

  it('still deduplicates after the job completed and was removed', async () => {
    const body = eventBody();
    const id = deliveryId(body);
    expect((await deliver(service.url, body)).status).toBe(202);
    const job = await waitFor(() => events.getJob(jobIdFor(id)));
    await job.remove();
    expect(await events.getJob(jobIdFor(id))).toBeUndefined();
    expect((await deliver(service.url, body)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(await events.getJob(jobIdFor(id))).toBeUndefined();
  });

  it('keys deliveries without an id by body hash, and keeps unknown events and bad JSON', async () => {
    const noId = JSON.stringify({ event: 'message.sent', data: { n: Math.random() } });
    const badJson = `{not json ${Math.random()}`;
    const unknown = JSON.stringify({ id: `evt_u_${Math.random()}`, event: 'no.such.event', data: {} });
    for (const b of [noId, badJson, unknown]) expect((await deliver(service.url, b)).status).toBe(202);
    expect((await deliver(service.url, noId)).status).toBe(200);
    const jobs = await waitFor(async () => {
      const all = await events.getJobs(['waiting', 'active', 'completed', 'failed']);
      const mine = all.filter((j) => j.data.body !== undefined && [noId, badJson, unknown].includes(j.data.body));
      return mine.length === 3 ? mine : undefined;
    });
    expect(jobs.map((j) => j.data.key).filter((k) => k.startsWith('sha256:'))).toHaveLength(2);
  });

  it('stores 200 concurrent distinct deliveries, each exactly once, and their 30% repeats as duplicates', async () => {
    const bodies = Array.from({ length: 200 }, () => eventBody());
    const sends = [...bodies, ...bodies.slice(0, 60)].sort(() => Math.random() - 0.5);
    const answers = await Promise.all(sends.map((b) => deliver(service.url, b).then((r) => r.status)));
    expect(answers.filter((s) => s === 202)).toHaveLength(200);
    expect(answers.filter((s) => s === 200)).toHaveLength(60);
    const ids = new Set(bodies.map(deliveryId));
    await waitFor(async () => (await Promise.all([...ids].map((id) => events.getJob(jobIdFor(id))))).every(Boolean));
  });

  it('readiness reports Redis as writable', async () => {
    const r = await fetch(service.url.replace('/webhooks', '/readyz'));
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ status: 'ready', redis: 'ok' });
    expect((await fetch(service.url.replace('/webhooks', '/healthz'))).status).toBe(200);
  });
});
