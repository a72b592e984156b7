import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_QUEUE } from '../../../src/queue/names.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { startTestService, TEST_SECRET, waitFor } from '../../support/service.js';

/**
 * The sandbox's signed event sender against the real receiver: its deliveries
 * are accepted, and when an answer is lost on the way back (the sender sees a
 * failure although the receiver stored the delivery) its retry, same id and
 * same bytes, is answered as a duplicate, leaving exactly one job.
 */
describe('sandbox events into the receiver', () => {
  const prefix = uniquePrefix('sbx-rcv');
  let service: Awaited<ReturnType<typeof startTestService>>;
  let api: RunningSandbox;
  let redis: Redis;
  let events: Queue;
  const answers: number[] = [];
  const sentBodies: string[] = [];

  beforeAll(async () => {
    service = await startTestService({ REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix });
    let first = true;
    // Forward every attempt to the receiver; lose the first answer, as a dropped connection would.
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      answers.push(res.status);
      if (!(init?.body instanceof Uint8Array)) throw new Error('the emitter sends its body as a Uint8Array');
      sentBodies.push(Buffer.from(init.body).toString('utf8'));
      if (first) {
        first = false;
        throw new TypeError('socket hang up (answer lost)');
      }
      return res;
    };
    api = await createSandbox({ webhookUrl: service.url, secret: TEST_SECRET, fetch: lossy, retry: { baseMs: 50, maxMs: 200 } }).listen(0);
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
  });
  afterAll(async () => {
    await api.close();
    await service.close();
    await events.close();
    redis.disconnect();
  });

  it('accepts the signed deliveries and deduplicates the sender retry of a delivery it already stored', async () => {
    const r = await fetch(`${api.url}/_sandbox/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contact: { name: 'Rita Retry', email: 'rita@example.com' }, channel_id: 23, body: 'hello' }),
    });
    expect(r.status).toBe(201);
    // contact.created, conversation.created, message.received: all delivered, the first one twice.
    await waitFor(async () => (await events.getJobCounts('waiting', 'active', 'completed'))['waiting'] === 3, 10_000);
    expect(answers[0]).toBe(202);
    expect(answers[1]).toBe(200);
    expect(sentBodies[1]).toBe(sentBodies[0]);
    expect(answers.filter((a) => a === 202)).toHaveLength(3);
    const jobs = await events.getJobs(['waiting']);
    expect(jobs.map((j) => j.name).sort()).toEqual(['contact.created', 'conversation.created', 'message.received']);
  });
});
