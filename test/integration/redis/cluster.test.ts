import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqCommand } from '../../../src/cli/dlq.js';
import { sendCommand } from '../../../src/cli/send.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { closeRedis, createRedisConnection, type RedisClient } from '../../../src/redis/connection.js';
import { startService, type RunningService } from '../../../src/runtime/service.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { loadHandlers } from '../../../src/handler/loader.js';
import { startWorker } from '../../../src/runtime/worker.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { startTestCluster, type TestCluster } from '../../support/cluster.js';
import { match } from '../../support/match.js';
import { deliver, memoryLogger, testConfig, waitFor } from '../../support/service.js';
import { memoryIo } from '../../support/io.js';

const TEST_HANDLERS = fileURLToPath(new URL('../../support/handlers/notes', import.meta.url));

/** Redis Cluster with a hash-tagged prefix: every key of Switchyard and BullMQ lands in one slot. */
describe('Redis Cluster (redis+cluster:// with a hash-tagged QUEUE_PREFIX)', () => {
  const prefix = '{sy-cluster}';
  let cluster: TestCluster;
  let api: RunningSandbox;
  let service: RunningService;
  let redis: RedisClient;

  beforeAll(async () => {
    cluster = await startTestCluster();
    api = await createSandbox().listen(0);
    const env = {
      REDIS_URL: cluster.url,
      QUEUE_PREFIX: prefix,
      HANDLERS_DIR: TEST_HANDLERS,
      WORKSPACE_API_URL: api.baseUrl,
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
    };
    const config = testConfig(env);
    const { log } = memoryLogger();
    service = await startService({
      config,
      log,
      receiver: true,
      worker: async ({ redisUrl, queues, hooks }) => {
        const loaded = await loadHandlers(TEST_HANDLERS);
        return startWorker(
          {
            config,
            redisUrl,
            log,
            hooks,
            set: new HandlerSet(
              handlerSnapshot(
                loaded.map((l) => l.handler),
                undefined,
                env,
              ),
            ),
          },
          queues,
        );
      },
    });
    redis = createRedisConnection(cluster.url, 'worker');
  }, 60_000);

  afterAll(async () => {
    await service?.close();
    if (redis) await closeRedis(redis);
    await api?.close();
    await cluster?.stop();
  });

  it('ingests, deduplicates, fans out and runs handlers with one write', async () => {
    const conv = (
      (await (await fetch(`${api.baseUrl}/conversations`, { headers: { authorization: 'Bearer sbx_read_acme' } })).json()) as {
        data: { id: number }[];
      }
    ).data[0]?.id as number;
    const body = messageBody('message.received', conv);
    const id = deliveryId(body);
    const url = `${service.receiver?.http.url}/webhooks`;
    expect((await deliver(url, body)).status).toBe(202);
    expect((await deliver(url, body)).status).toBe(200);
    const handlers = new Queue(HANDLERS_QUEUE, { connection: redis, prefix });
    const events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    try {
      await waitFor(async () => (await handlers.getJob(jobIdFor(id, 'note-on-message')))?.isCompleted(), 15_000);
      expect(await events.getJob(jobIdFor(id))).toBeDefined();
      const writes = (
        (await (await fetch(`${api.url}/_sandbox/requests?method=POST&path=/conversations/*/notes`)).json()) as {
          data: { status: number }[];
        }
      ).data;
      expect(writes.filter((w) => w.status === 201)).toHaveLength(1);
    } finally {
      await handlers.close();
      await events.close();
    }
  }, 60_000);

  it('the one-shot commands reach the cluster too: dlq list shows a dead letter, send --direct stores a delivery', async () => {
    const env = { REDIS_URL: cluster.url, QUEUE_PREFIX: prefix, SWITCHYARD_HOME: '/nonexistent' };
    expect((await deliver(`${service.receiver?.http.url}/webhooks`, '{"id":"evt_cluster_cut","event":"lead.won","da')).status).toBe(202);
    const events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    try {
      await waitFor(async () => (await events.getFailedCount()) >= 1, 15_000);
    } finally {
      await events.close();
    }
    const list = memoryIo(env);
    expect(await dlqCommand.run(['list', '--json'], list)).toBe(0);
    const { entries } = JSON.parse(list.out()) as { entries: { queue: string; reason: string }[] };
    expect(entries).toEqual(
      expect.arrayContaining([expect.objectContaining({ queue: 'events', reason: match.stringMatching(/^invalid_json/) })]),
    );
    const text = memoryIo(env);
    expect(await dlqCommand.run(['list', '--queue', 'events'], text)).toBe(0);
    expect(text.out()).toMatch(/\d+ dead-lettered\n$/);

    const send = memoryIo(env);
    expect(await sendCommand.run(['contact.created', '--direct'], send)).toBe(0);
    expect(send.out()).toMatch(/^accepted contact\.created evt_replay_\w+/);
  }, 60_000);
});
