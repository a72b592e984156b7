import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqCommand } from '../../../src/cli/dlq.js';
import { sendCommand } from '../../../src/cli/send.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { EVENTS_QUEUE } from '../../../src/queue/names.js';
import { closeRedis, createRedisConnection, type RedisClient } from '../../../src/redis/connection.js';
import { freePort, startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { deliveryId, eventBody } from '../../support/events.js';
import { uniquePrefix } from '../../support/redis.js';
import { memoryIo } from '../../support/io.js';
import { deliver, startTestService, waitFor } from '../../support/service.js';

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
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor switchyard-master 127.0.0.1 ${master.port} 1`,
        'sentinel down-after-milliseconds switchyard-master 5000',
        '',
      ].join('\n'),
    );
    sentinel = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
    url = `redis+sentinel://127.0.0.1:${port}/switchyard-master`;
    // Ready once the sentinel answers for the master.
    await waitFor(
      async () => {
        const probe = createRedisConnection(url, 'worker');
        probe.on('error', () => undefined);
        try {
          const pong = await Promise.race([probe.ping(), new Promise((r) => setTimeout(() => r(null), 1_000))]).catch(() => null);
          return pong === 'PONG';
        } finally {
          await closeRedis(probe);
        }
      },
      15_000,
      200,
    );
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
    const id = deliveryId(body);
    expect((await deliver(service.url, body)).status).toBe(202);
    expect((await deliver(service.url, body)).status).toBe(200);
    const events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    try {
      await waitFor(() => events.getJob(jobIdFor(id)));
    } finally {
      await events.close();
    }
  });

  it('the one-shot commands find the master through the sentinel: dlq list shows a dead letter, send --direct stores a delivery', async () => {
    const env = { REDIS_URL: url, QUEUE_PREFIX: prefix, SWITCHYARD_HOME: '/nonexistent' };
    const send = memoryIo(env);
    expect(await sendCommand.run(['lead.won', '--direct'], send)).toBe(0);
    expect(send.out()).toMatch(/^accepted lead\.won (evt_replay_\w+)/);
    const id = /evt_replay_\w+/.exec(send.out())?.[0] as string;

    // The pump queues the stored delivery; a worker that refuses it dead-letters it.
    const worker = new Worker(
      EVENTS_QUEUE,
      async () => {
        throw new UnrecoverableError('refused by the sentinel test');
      },
      { connection: redis, prefix },
    );
    try {
      const events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
      try {
        await waitFor(async () => (await events.getJob(jobIdFor(id)))?.isFailed(), 15_000);
      } finally {
        await events.close();
      }
    } finally {
      await worker.close();
    }
    const list = memoryIo(env);
    expect(await dlqCommand.run(['list', '--json', '--reason', 'sentinel test'], list)).toBe(0);
    const { entries } = JSON.parse(list.out()) as { entries: { queue: string; key: string; event: string }[] };
    expect(entries).toEqual(expect.arrayContaining([expect.objectContaining({ queue: 'events', key: id, event: 'lead.won' })]));
  }, 30_000);
});
