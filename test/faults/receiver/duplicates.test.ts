/**
 * (e) 10 000 distinct deliveries, 30% of them sent again, all in random
 * order, spread over two receiver processes and processed by two workers.
 * Exactly the distinct ones are accepted (202), the repeats are answered 200
 * duplicate, and each distinct delivery is processed and written once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { deliveryId, messageBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { createRig, sendAll, shuffle, type Rig, type Send } from '../../support/faults/rig.js';

const DISTINCT = 10_000;
const DUPLICATE_SHARE = 0.3;

describe('10 000 distinct deliveries with 30% duplicates in random order', () => {
  let rig: Rig | undefined;
  afterAll(async () => rig?.close());

  it('accepts each distinct delivery once, answers repeats as duplicates, and writes each once', async () => {
    const started = Date.now();
    const seed = Number(process.env['FAULT_SEED'] ?? Date.now() % 2 ** 31);
    rig = await createRig({ prefix: uniquePrefix('dups'), redisUrl: testRedisUrl() });
    const receivers = await Promise.all([rig.startReceiver(), rig.startReceiver()]);
    const workers = [rig.startWorker({ WORKER_CONCURRENCY: '32' }), rig.startWorker({ WORKER_CONCURRENCY: '32' })];
    await Promise.all(workers.map((w) => w.waitFor(/worker started/, 20_000)));

    let k = 0;
    const distinct: Send[] = Array.from({ length: DISTINCT }, () => {
      const body = messageBody('message.received', rig!.conv);
      return { id: deliveryId(body), body, to: k++ % 2 };
    });
    // Distinct deliveries are distinct changes too (a message's change key is its id), or one would rightly run once.
    const messageIds = new Set(distinct.map((s) => (JSON.parse(s.body) as { data: { id: number } }).data.id));
    expect(messageIds.size).toBe(DISTINCT);
    // Every third-or-so delivery again (exactly 30%), to either receiver.
    const repeats: Send[] = shuffle([...distinct], seed)
      .slice(0, Math.round(DISTINCT * DUPLICATE_SHARE))
      .map((s, i) => ({ ...s, to: i % 2 }));
    const sends = shuffle([...distinct, ...repeats], seed + 1);
    const result = await sendAll(sends, () => receivers.map((r) => r.url), { concurrency: 32, deadlineMs: 150_000 });
    const sendMs = Date.now() - started;

    const r = await rig.reconcile(
      `10k distinct + 30% duplicates, 2 receivers, 2 workers (seed ${seed}, ${sends.length} requests sent in ${(sendMs / 1000).toFixed(1)} s, statuses ${JSON.stringify(result.statuses)})`,
      distinct.map((s) => s.id),
      result.acked,
      { startedAt: started, timeoutMs: 150_000, settleMs: 2_000 },
    );
    expect(result.statuses).toEqual({ '202': DISTINCT, '200': repeats.length });
    expect({ lost: r.lostIds, repeated: r.repeatedIds, unexpected: r.unexpected, failedJobs: r.failedJobs }).toEqual({
      lost: [],
      repeated: [],
      unexpected: 0,
      failedJobs: 0,
    });
    expect(r).toMatchObject({ sent: DISTINCT, acked: DISTINCT, processed: DISTINCT, written: DISTINCT });
  }, 300_000);
});
