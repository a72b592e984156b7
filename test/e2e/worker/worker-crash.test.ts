import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/events/envelope.js';
import { HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import type { LoggedRequest } from '../../../src/sandbox/request-log.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, startTestService, waitFor } from '../../support/service.js';

const TEST_HANDLERS = fileURLToPath(new URL('../../support/handlers/notes', import.meta.url));

describe('a worker killed with SIGKILL in the middle of a handler', () => {
  const prefix = uniquePrefix('crash');
  let api: RunningSandbox;
  let receiver: Awaited<ReturnType<typeof startTestService>>;
  let redis: Redis;
  let handlers: Queue;
  const workers: CliProcess[] = [];

  const startWorker = (env: Record<string, string> = {}) => {
    const w = runCli(['work'], {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      HANDLERS_DIR: TEST_HANDLERS,
      JOB_LOCK_DURATION: '1s',
      WORKSPACE_API_URL: api.baseUrl,
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
      LOG_LEVEL: 'info',
      ...env,
    });
    workers.push(w);
    return w;
  };
  const requests = async (): Promise<LoggedRequest[]> =>
    ((await (await fetch(`${api.url}/_sandbox/requests?method=POST&path=/conversations/*/notes`)).json()) as { data: LoggedRequest[] })
      .data;

  beforeAll(async () => {
    api = await createSandbox().listen(0);
    receiver = await startTestService({ REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix });
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    handlers = new Queue(HANDLERS_QUEUE, { connection: redis, prefix });
  });
  afterAll(async () => {
    for (const w of workers) await w.stop('SIGKILL');
    await receiver.close();
    await handlers.close();
    redis.disconnect();
    await api.close();
  });

  it('runs the job again and the sandbox shows one write', async () => {
    const convs = await fetch(`${api.baseUrl}/conversations`, { headers: { authorization: 'Bearer sbx_full_acme' } });
    const conv = ((await convs.json()) as { data: { id: number }[] }).data[0]?.id as number;
    const body = messageBody('message.received', conv);
    const id = deliveryId(body);

    const first = startWorker({ NOTE_SLEEP_MS: '60000' });
    await first.waitFor(/worker started/);
    expect((await deliver(receiver.url, body)).status).toBe(202);
    // The handler wrote its note and is now lingering: kill it mid-handler.
    await waitFor(async () => (await requests()).some((r) => r.status === 201), 15_000);
    expect(await first.stop('SIGKILL')).toBeNull();

    const second = startWorker();
    await second.waitFor(/worker started/);
    const job = await waitFor(
      async () => {
        const j = await handlers.getJob(jobIdFor(id, 'note-on-message'));
        return j && (await j.isCompleted()) ? j : undefined;
      },
      30_000,
      100,
    );
    expect(job.returnvalue).toBeDefined();

    const writes = await requests();
    // Two attempts, one Idempotency-Key: the second was answered as a replay, so one note exists.
    expect(writes).toHaveLength(2);
    expect(new Set(writes.map((w) => w.idempotency_key)).size).toBe(1);
    expect(writes.map((w) => w.replay)).toEqual([false, true]);
    const notes = await fetch(`${api.baseUrl}/conversations/${conv}/messages?per_page=100`, {
      headers: { authorization: 'Bearer sbx_full_acme' },
    });
    const mine = ((await notes.json()) as { data: { type: string; body: string }[] }).data.filter((m) => m.body === `seen ${id}`);
    expect(mine).toHaveLength(1);
    expect(await second.stop('SIGTERM')).toBe(0);
    // The API token never reaches the logs.
    expect(first.output() + second.output()).not.toContain('sbx_full_acme');
    expect(second.output()).toMatch(/"handler":"note-on-message".*"outcome":"completed"/);
  }, 60_000);
});
