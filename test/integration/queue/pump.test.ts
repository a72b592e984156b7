import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/events/envelope.js';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import { IngestStore } from '../../../src/queue/ingest.js';
import { EVENTS_QUEUE, ingestKeys } from '../../../src/queue/names.js';
import { IngestPump } from '../../../src/queue/pump.js';
import { IngestBus } from '../../../src/lifecycle/ingest-bus.js';
import type { PumpFacts } from '../../../src/lifecycle/ingest-events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { memoryLogger, waitFor } from '../../support/service.js';

const delivery = (key: string): StoredDelivery => ({
  key,
  name: 'message.received',
  receivedAt: new Date().toISOString(),
  secretIndex: 0,
  headers: {},
  body: `{"id":"${key}"}`,
});

describe('ingest pump (real redis-server)', () => {
  const prefix = uniquePrefix('pump');
  const keys = ingestKeys(prefix);
  let redis: Redis;
  let events: Queue<StoredDelivery>;
  const pumps: IngestPump[] = [];
  const conns: Redis[] = [];

  const newPump = () => {
    const a = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    const b = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    conns.push(a, b);
    const pump = new IngestPump({ redis: a, blocking: b, events, prefix, log: memoryLogger().log, heartbeatMs: 200 });
    pumps.push(pump);
    return pump;
  };

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    events = new Queue<StoredDelivery>(EVENTS_QUEUE, { connection: redis, prefix });
  });
  afterAll(async () => {
    for (const p of pumps) await p.stop();
    await events.close();
    for (const c of [...conns, redis]) c.disconnect();
  });

  it('three pumps move 600 deliveries, each into exactly one job', async () => {
    const store = new IngestStore(redis, prefix, 60_000);
    for (let i = 0; i < 3; i++) newPump().start();
    const ids = Array.from({ length: 600 }, (_, i) => `many_${i}`);
    await Promise.all(ids.map((id) => store.put(delivery(id))));
    await waitFor(async () => ((await events.getJobCounts('waiting'))['waiting'] ?? 0) >= 600, 15_000);
    expect((await events.getJobCounts('waiting'))['waiting']).toBe(600);
    expect(await redis.llen(keys.inbox)).toBe(0);
    // A pump counts a batch once its in-flight list is dropped, just after the jobs exist.
    await waitFor(() => pumps.reduce((n, p) => n + p.moved, 0) >= 600);
    expect(pumps.reduce((n, p) => n + p.moved, 0)).toBe(600);
  });

  it("returns a dead pump's in-flight deliveries to the inbox and queues them once", async () => {
    // A pump that died after taking a batch: its in-flight list is left, its heartbeat is gone.
    const dead = 'deadbeef';
    await redis.sadd(keys.pumps, dead);
    await redis.rpush(keys.inflight(dead), JSON.stringify(delivery('orphan_1')), JSON.stringify(delivery('orphan_2')));
    const live = pumps[0] as IngestPump;
    await waitFor(async () => (await events.getJob(jobIdFor('orphan_2'))) !== undefined, 10_000);
    expect(await redis.llen(keys.inflight(dead))).toBe(0);
    expect(await redis.sismember(keys.pumps, dead)).toBe(0);
    // Recovering the same batch again (a second crash) adds nothing: job ids are delivery keys.
    await redis.sadd(keys.pumps, dead);
    await redis.rpush(keys.inflight(dead), JSON.stringify(delivery('orphan_1')));
    await live.recoverDead();
    await waitFor(async () => (await redis.llen(keys.inbox)) === 0 && (await redis.llen(keys.inflight(live.id))) === 0);
    const jobs = await events.getJobs(['waiting']);
    expect(jobs.filter((j) => j.data.key === 'orphan_1')).toHaveLength(1);
  });

  it('sets an unreadable inbox item aside and queues the rest of its batch', async () => {
    const store = new IngestStore(redis, prefix, 60_000);
    await redis.rpush(keys.inbox, 'garbage\nthat is no delivery');
    await store.put(delivery('after_garbage'));
    await waitFor(async () => (await events.getJob(jobIdFor('after_garbage'))) !== undefined, 10_000);
    await waitFor(async () => (await redis.llen(keys.unreadable)) === 1, 5_000);
    expect(await redis.lrange(keys.unreadable, 0, -1)).toEqual(['garbage\nthat is no delivery']);
    // …and the pumps keep moving: nothing is stuck in an in-flight list.
    await store.put(delivery('later'));
    await waitFor(async () => (await events.getJob(jobIdFor('later'))) !== undefined, 10_000);
    for (const p of pumps) expect(await redis.llen(keys.inflight(p.id))).toBe(0);
  });
});

describe('ingest pump on the ingest stream (real redis-server)', () => {
  const prefix = uniquePrefix('pump-ingest');
  let redis: Redis;
  let blocking: Redis;
  let events: Queue<StoredDelivery>;
  let pump: IngestPump | undefined;

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    blocking = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    events = new Queue<StoredDelivery>(EVENTS_QUEUE, { connection: redis, prefix });
  });
  afterAll(async () => {
    await pump?.stop();
    await events.close();
    redis.disconnect();
    blocking.disconnect();
  });

  it('reports each delivery it queues (pumping, then pumped) and each job carries the trace context its pumping scope gave', async () => {
    const pumping: PumpFacts[] = [];
    const done: string[] = [];
    const ingest = new IngestBus().subscribe({
      pumping: ({ delivery: d }) => {
        pumping.push(d);
        return { run: (fn) => fn(), traceparent: `tp-of-${d.key}` };
      },
      pumped: (e) => void done.push(`${e.delivery.key}:${e.ok}`),
    });
    pump = new IngestPump({ redis, blocking, events, prefix, log: memoryLogger().log, ingest, lingerMs: 50 });
    const store = new IngestStore(redis, prefix, 60_000);
    await store.put({ ...delivery('traced_1'), traceparent: 'from-the-receiver' });
    await store.put(delivery('traced_2'));
    pump.start();
    await waitFor(async () => (await events.getJob(jobIdFor('traced_2'))) !== undefined && done.length === 2, 10_000);
    const job = async (key: string) => (await events.getJob(jobIdFor(key)))?.data.traceparent;
    expect(await job('traced_1')).toBe('tp-of-traced_1');
    expect(await job('traced_2')).toBe('tp-of-traced_2');
    expect(done.sort()).toEqual(['traced_1:true', 'traced_2:true']);
    const first = pumping.find((d) => d.key === 'traced_1');
    expect(first).toMatchObject({
      name: 'message.received',
      jobId: jobIdFor('traced_1'),
      queue: EVENTS_QUEUE,
      traceparent: 'from-the-receiver',
    });
    // Both were in the inbox before the pump started: one batch of two.
    expect(pumping.map((d) => d.batch)).toEqual([2, 2]);
  });
});
