import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../src/events/envelope.js';
import { EVENTS_QUEUE } from '../../src/queue/names.js';
import { closeRedis, createRedisConnection, type RedisClient } from '../../src/redis/connection.js';
import { freePort, startManagedRedis, type ManagedRedis } from '../../src/redis/managed.js';
import { uniquePrefix } from '../support/redis.js';
import { deliver, eventBody, startTestService, waitFor } from '../support/service.js';

/** REDIS_URL=redis+sentinel://…/<master>: the service finds the master through a real Sentinel. */
describe('Redis Sentinel', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-sentinel-'));
  const prefix = uniquePrefix('sentinel');
  let master: ManagedRedis;
  let sentinel: ChildProcess;
  let url: string;
  let service: Awaited<ReturnType<typeof startTestService>>;
  let redis: RedisClient;

  beforeAll(async () => {
    master = await startManagedRedis({ dir: join(dir, 'master') });
    const port = await freePort();
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(conf, [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor switchyard-master 127.0.0.1 ${master.port} 1`, 'sentinel down-after-milliseconds switchyard-master 5000', ''].join('\n'));
    sentinel = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
    url = `redis+sentinel://127.0.0.1:${port}/switchyard-master`;
    // Ready once the sentinel answers for the master.
    await waitFor(async () => {
      const probe = createRedisConnection(url, 'worker');
      probe.on('error', () => undefined);
      try {
        const pong = await Promise.race([probe.ping(), new Promise((r) => setTimeout(() => r(null), 1_000))]).catch(() => null);
        return pong === 'PONG';
      } finally {
        await closeRedis(probe);
      }
    }, 15_000, 200);
    service = await startTestService({ REDIS_URL: url, QUEUE_PREFIX: prefix });
    redis = createRedisConnection(url, 'worker');
  }, 30_000);

  afterAll(async () => {
    await service?.close();
    if (redis) await closeRedis(redis);
    sentinel?.kill('SIGTERM');
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('accepts, deduplicates and queues through the master the sentinel names', async () => {
    const body = eventBody('contact.created');
    const id = JSON.parse(body).id as string;
    expect((await deliver(service.url, body)).status).toBe(202);
    expect((await deliver(service.url, body)).status).toBe(200);
    const events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    try {
      await waitFor(() => events.getJob(jobIdFor(id)));
    } finally {
      await events.close();
    }
  });
});
