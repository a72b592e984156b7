import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/events/envelope.js';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import { decodeInboxItem } from '../../../src/queue/inbox-item.js';
import { IngestStore } from '../../../src/queue/ingest.js';
import { EVENTS_QUEUE, ingestKeys } from '../../../src/queue/names.js';
import { startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { DiskSpool } from '../../../src/receiver/spool.js';
import { SpoolDrainer } from '../../../src/receiver/spool-drainer.js';
import { IngestBus } from '../../../src/lifecycle/ingest-bus.js';
import { deliveryId, eventBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, memoryLogger, startTestService, waitFor } from '../../support/service.js';

describe('disk spool while Redis is down', () => {
  const prefix = uniquePrefix('spool');
  const dir = mkdtempSync(join(tmpdir(), 'sy-spool-'));
  let redisServer: ManagedRedis;
  let service: Awaited<ReturnType<typeof startTestService>>;

  beforeAll(async () => {
    redisServer = await startManagedRedis({ dir: join(dir, 'redis') });
    service = await startTestService({ REDIS_URL: redisServer.url, QUEUE_PREFIX: prefix, SPOOL_DIR: join(dir, 'spool') });
  });
  afterAll(async () => {
    await service.close();
    await redisServer.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 202 from the spool, reports its depth, and drains in order without loss or repeats once Redis returns', async () => {
    await redisServer.stop();
    const bodies = Array.from({ length: 20 }, () => eventBody());
    for (const b of bodies) {
      const r = await deliver(service.url, b);
      expect(r.status).toBe(202);
      expect(await r.json()).toMatchObject({ status: 'accepted' });
    }
    // A repeat while Redis is away cannot be recognised yet: spooled again, absorbed by the drain.
    expect((await deliver(service.url, bodies[0] as string)).status).toBe(202);
    const ready = (await (await fetch(service.url.replace('/webhooks', '/readyz'))).json()) as { redis: string; spool: { bytes: number } };
    expect(ready.redis).toBe('unavailable');
    expect(ready.spool.bytes).toBeGreaterThan(0);
    expect(service.lines.join('')).toMatch(/"outcome":"spooled"/);

    redisServer = await startManagedRedis({ dir: join(dir, 'redis'), port: redisServer.port });
    const check = new Redis(redisServer.url, { maxRetriesPerRequest: null });
    const events = new Queue<StoredDelivery>(EVENTS_QUEUE, { connection: check, prefix });
    try {
      const ids = bodies.map(deliveryId);
      await waitFor(async () => (await Promise.all(ids.map((id) => events.getJob(jobIdFor(id))))).every(Boolean), 20_000, 100);
      const all = await events.getJobs(['waiting', 'active', 'completed', 'failed']);
      expect(all.filter((j) => ids.includes(j.data.key))).toHaveLength(20);
      // Arrival order is kept: job timestamps follow the order the deliveries were sent.
      const order = ids.map((id) => all.find((j) => j.data.key === id)?.timestamp ?? 0);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      await waitFor(() => readdirSync(join(dir, 'spool')).length === 0);
      expect((await deliver(service.url, bodies[3] as string)).status).toBe(200);
    } finally {
      await events.close();
      check.disconnect();
    }
  }, 60_000);
});

describe('spool bounds and crash safety', () => {
  const delivery = (key: string): StoredDelivery => ({
    key,
    name: 'message.received',
    receivedAt: new Date().toISOString(),
    secretIndex: 0,
    headers: {},
    body: `{"id":"${key}"}`,
  });

  it('refuses past SPOOL_MAX_BYTES (the route then answers 503)', () => {
    const spool = new DiskSpool(mkdtempSync(join(tmpdir(), 'sy-spool-max-')), 300);
    spool.append(delivery('a'));
    expect(() => {
      for (let i = 0; i < 10; i++) spool.append(delivery(`b${i}`));
    }).toThrow(/spool is full/);
    spool.close();
  });

  it('a drain interrupted half-way and repeated after a restart moves each delivery exactly once', async () => {
    const sdir = mkdtempSync(join(tmpdir(), 'sy-spool-crash-'));
    const prefix = uniquePrefix('spoolcrash');
    const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    const store = new IngestStore(redis, prefix, 60_000);
    try {
      const spool = new DiskSpool(sdir, 1e9);
      for (let i = 0; i < 10; i++) spool.append(delivery(`k${i}`));
      spool.close();
      // The crashed drain had already stored the first four before dying.
      for (let i = 0; i < 4; i++) await store.put(delivery(`k${i}`));
      // …and a torn last line from a crash mid-append (never acknowledged).
      const [segment] = readdirSync(sdir);
      appendFileSync(join(sdir, segment as string), '{"key":"torn","na');
      const restarted = new DiskSpool(sdir, 1e9);
      const drainer = new SpoolDrainer(restarted, store, memoryLogger().log);
      await drainer.drainOnce();
      expect(drainer.drained).toBe(10);
      expect(readdirSync(sdir)).toEqual([]);
      const inbox = (await redis.lrange(ingestKeys(prefix).inbox, 0, -1)).map((l) => decodeInboxItem(l).key);
      expect(inbox).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9']);
    } finally {
      redis.disconnect();
      rmSync(sdir, { recursive: true, force: true });
    }
  });

  it('sets an unreadable line aside and drains the rest (a damaged segment never jams the spool)', async () => {
    const sdir = mkdtempSync(join(tmpdir(), 'sy-spool-corrupt-'));
    const spool = new DiskSpool(sdir, 1e9);
    spool.append(delivery('c1'));
    spool.close();
    const [segment] = readdirSync(sdir);
    appendFileSync(join(sdir, segment as string), '{"key":"damag\n');
    const later = new DiskSpool(sdir, 1e9);
    later.append(delivery('c2'));
    later.close();
    const put: string[] = [];
    const store = {
      put: async (d: StoredDelivery) => {
        put.push(d.key);
        return 'accepted' as const;
      },
    } as unknown as IngestStore;
    const { log, lines } = memoryLogger();
    await new SpoolDrainer(new DiskSpool(sdir, 1e9), store, log).drainOnce();
    expect(put).toEqual(['c1', 'c2']);
    expect(readdirSync(sdir)).toEqual([`${segment}.corrupt`]);
    expect(readFileSync(join(sdir, `${segment}.corrupt`), 'utf8')).toContain('damag');
    expect(lines.join('')).toMatch(/set aside/);
    rmSync(sdir, { recursive: true, force: true });
  });

  it('keeps a segment whose drain fails and retries it later; reports the drained segment on the ingest stream', async () => {
    const sdir = mkdtempSync(join(tmpdir(), 'sy-spool-fail-'));
    const spool = new DiskSpool(sdir, 1e9);
    spool.append(delivery('x'));
    let calls = 0;
    const flaky = {
      put: async () => {
        if (calls++ === 0) throw new Error('redis down');
        return 'accepted' as const;
      },
    } as unknown as IngestStore;
    const drained: number[] = [];
    const ingest = new IngestBus().subscribe({ drained: (e) => void drained.push(e.count) });
    const drainer = new SpoolDrainer(spool, flaky, memoryLogger().log, ingest);
    await drainer.drainOnce();
    expect(readdirSync(sdir)).toHaveLength(1);
    expect(drained).toEqual([]);
    await drainer.drainOnce();
    expect(readdirSync(sdir)).toHaveLength(0);
    // Reported on the ingest stream once the segment is moved, not while it is kept.
    expect(drained).toEqual([1]);
    writeFileSync(join(sdir, 'unrelated.txt'), 'x');
    expect(spool.segments()).toEqual([]);
    rmSync(sdir, { recursive: true, force: true });
  });
});
