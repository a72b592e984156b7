import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/events/envelope.js';
import { EVENTS_QUEUE } from '../../../src/queue/names.js';
import { startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { eventBody } from '../../support/events.js';
import { uniquePrefix } from '../../support/redis.js';
import { deliver, startTestService, waitFor } from '../../support/service.js';

/** This file runs its own redis-server, so it can stop and restart it. */
describe('Redis outage', () => {
  const prefix = uniquePrefix('outage');
  const dir = mkdtempSync(join(tmpdir(), 'sy-outage-'));
  let redisServer: ManagedRedis;
  let service: Awaited<ReturnType<typeof startTestService>>;

  beforeAll(async () => {
    redisServer = await startManagedRedis({ dir, appendfsync: 'always' });
    service = await startTestService({ REDIS_URL: redisServer.url, QUEUE_PREFIX: prefix });
  });
  afterAll(async () => {
    await service.close();
    await redisServer.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After within a second while Redis is down, and 202 after it returns, losing nothing acknowledged', async () => {
    const acknowledged: string[] = [];
    for (let i = 0; i < 50; i++) {
      const body = eventBody();
      const r = await deliver(service.url, body);
      expect(r.status).toBe(202);
      acknowledged.push((JSON.parse(body) as { id: string }).id);
    }

    await redisServer.stop();
    const refused = eventBody();
    const started = Date.now();
    const r = await deliver(service.url, refused);
    const took = Date.now() - started;
    expect(r.status).toBe(503);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(took).toBeLessThan(1_000);
    const ready = await fetch(service.url.replace('/webhooks', '/readyz'));
    expect(ready.status).toBe(503);

    redisServer = await startManagedRedis({ dir, port: redisServer.port, appendfsync: 'always' });
    // The sender retries the refused delivery; once Redis is back it is accepted.
    const retried = await waitFor(
      async () => {
        const res = await deliver(service.url, refused);
        return res.status === 202 ? res : undefined;
      },
      10_000,
      100,
    );
    expect(retried.status).toBe(202);
    acknowledged.push((JSON.parse(refused) as { id: string }).id);

    const check = new Redis(redisServer.url);
    const events = new Queue(EVENTS_QUEUE, { connection: check, prefix });
    try {
      await waitFor(async () => (await Promise.all(acknowledged.map((id) => events.getJob(jobIdFor(id))))).every(Boolean), 15_000, 100);
      // Duplicates of acknowledged deliveries are still recognised after the restart (dedupe keys persisted).
      expect((await deliver(service.url, eventBody('message.received', undefined, { id: acknowledged[0] }))).status).toBe(200);
    } finally {
      await events.close();
      check.disconnect();
    }
  });
});
