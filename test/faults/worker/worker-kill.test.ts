/**
 * (b) A worker SIGKILLed mid-job, repeatedly. Each handler writes its note and
 * then lingers (NOTE_SLEEP_MS), so at every kill several jobs have written and
 * not completed: their locks lapse (JOB_LOCK_DURATION=1s), another worker runs
 * them again, and the write is answered as an idempotent replay, not repeated.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { deliveryId, messageBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { createRig, sendAll, sleep, type Rig, type Send } from '../../support/faults/rig.js';

const DELIVERIES = 300;
const KILLS = 5;

describe('a worker SIGKILLed mid-job, repeatedly', () => {
  let rig: Rig | undefined;
  afterAll(async () => rig?.close());

  it(`${KILLS} kills during ${DELIVERIES} deliveries: every job completes once, every note is written once`, async () => {
    const started = Date.now();
    rig = await createRig({ prefix: uniquePrefix('wkill'), redisUrl: testRedisUrl() });
    const receiver = await rig.startReceiver();
    const sends: Send[] = Array.from({ length: DELIVERIES }, () => {
      const body = messageBody('message.received', rig!.conv);
      return { id: deliveryId(body), body, to: 0 };
    });
    const result = await sendAll(sends, () => [receiver.url], { concurrency: 16 });
    expect(result.acked.size).toBe(DELIVERIES);

    const env = { JOB_LOCK_DURATION: '1s', NOTE_SLEEP_MS: '300', WORKER_CONCURRENCY: '8' };
    const fresh = () => [...rig!.collector.writesById().values()].reduce((a, b) => a + b, 0);
    let killedMidJob = 0;
    for (let k = 0; k < KILLS; k++) {
      const w = rig.startWorker(env);
      await w.waitFor(/worker started/, 20_000);
      const before = fresh();
      // Kill once this worker has written a few fresh notes (not just replayed earlier ones, which under
      // load can be all it did first): its other jobs are lingering after their write.
      await waitUntil(() => {
        rig!.collector.harvest();
        return fresh() >= Math.min(before + 5, DELIVERIES);
      }, 30_000);
      if (fresh() > before) killedMidJob++;
      expect(await w.stop('SIGKILL')).toBeNull();
      await sleep(200);
    }
    const last = rig.startWorker(env);
    await last.waitFor(/worker started/, 20_000);

    const r = await rig.reconcile(
      `worker SIGKILL x${KILLS} mid-job`,
      sends.map((s) => s.id),
      result.acked,
      { startedAt: started, timeoutMs: 120_000, settleMs: 2_500 },
    );
    const replays = rig.collector.entries().filter((e) => e.replay).length;
    console.log(`[faults] worker SIGKILL: kills=${KILLS} with fresh writes before the kill=${killedMidJob} idempotent replays=${replays}`);
    expect(killedMidJob).toBe(KILLS);
    // At least one kill hit jobs that had written and not completed: they ran again and were replayed.
    expect(replays).toBeGreaterThan(0);
    expect({ lost: r.lostIds, repeated: r.repeatedIds, unexpected: r.unexpected, failedJobs: r.failedJobs }).toEqual({
      lost: [],
      repeated: [],
      unexpected: 0,
      failedJobs: 0,
    });
    expect(r).toMatchObject({ sent: DELIVERIES, acked: DELIVERIES, processed: DELIVERIES, written: DELIVERIES });
  }, 180_000);
});

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}
