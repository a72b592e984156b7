import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/events/envelope.js';
import { HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import type { LoggedRequest } from '../../../src/sandbox/request-log.js';
import { conversationBody, deliveryId } from '../../support/events.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, startTestService, waitFor } from '../../support/service.js';

const WF = fileURLToPath(new URL('../../support/handlers/workflow', import.meta.url));

describe('a worker killed with SIGKILL while a run sleeps (built CLI, signed delivery in, writes at the sandbox)', () => {
  const prefix = uniquePrefix('wf-kill');
  let api: RunningSandbox;
  let receiver: Awaited<ReturnType<typeof startTestService>>;
  let redis: Redis;
  let handlers: Queue;
  const workers: CliProcess[] = [];

  const startWorker = () => {
    const w = runCli(['work'], {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      HANDLERS_DIR: WF,
      HANDLERS: 'wf-sleeper',
      JOB_LOCK_DURATION: '1s',
      WF_SLEEP_MS: '2500',
      WORKSPACE_API_URL: api.baseUrl,
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
      LOG_LEVEL: 'info',
    });
    workers.push(w);
    return w;
  };
  const notes = async (id: string): Promise<LoggedRequest[]> =>
    (
      (await (await fetch(`${api.url}/_sandbox/requests?method=POST&path=/conversations/*/notes`)).json()) as { data: LoggedRequest[] }
    ).data.filter((r) => JSON.stringify(r.body).includes(id));

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

  it('the run resumes in another worker after its sleep: the write before it is not made again, the one after it once', async () => {
    const convs = await fetch(`${api.baseUrl}/conversations`, { headers: { authorization: 'Bearer sbx_full_acme' } });
    const conv = ((await convs.json()) as { data: { id: number }[] }).data[0]?.id as number;
    const body = conversationBody('conversation.opened', conv, 'kill');
    const id = deliveryId(body);

    const first = startWorker();
    await first.waitFor(/worker started/);
    expect((await deliver(receiver.url, body)).status).toBe(202);
    // Parked in its sleep (delayed, no lock held): kill the worker.
    await waitFor(async () => (await handlers.getJob(jobIdFor(id, 'wf-sleeper')))?.isDelayed(), 15_000);
    expect(await first.stop('SIGKILL')).toBeNull();
    expect((await notes(id)).map((r) => (r.body as { body: string }).body)).toEqual([`before ${id}`]);

    const second = startWorker();
    await second.waitFor(/worker started/);
    const job = await waitFor(
      async () => {
        const j = await handlers.getJob(jobIdFor(id, 'wf-sleeper'));
        return j && (await j.isCompleted()) ? j : undefined;
      },
      30_000,
      100,
    );
    expect(job.returnvalue).toBeDefined();
    // One request per write: the replay took the first write's response from the run's record (no request, not even a replayed one).
    expect((await notes(id)).map((r) => (r.body as { body: string }).body)).toEqual([`before ${id}`, `after ${id}`]);
    expect(await second.stop('SIGTERM')).toBe(0);
    expect(second.output()).toMatch(/"handler":"wf-sleeper".*"outcome":"completed"/);
  }, 60_000);
});
