/**
 * Durable workflows across a restart of Redis itself: a redis-server of the
 * test's own (AOF, `appendfsync always`) is stopped (SHUTDOWN: SIGTERM) or
 * crashed (SIGKILL) and started again on the same port and data directory
 * while runs sleep, wait for an event and sit in a cancelOn-guarded sleep,
 * beside `switchyard serve` and `switchyard work` processes that ride the
 * outage out. Afterwards every run still wakes (on time, on its reply, or
 * cancelled) exactly once and makes its write after the wait exactly once;
 * a reply accepted just before the outage and one sent during it (retried on
 * 503 as the workspace does) both answer their waits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { waitFor } from '../../support/wait.js';
import { deliver } from '../../support/service.js';
import { killRedis, sleep } from '../../support/faults/rig.js';
import { freshWrites, noteWrites, post, reply, trigger, wffEnv, workflowScenes } from '../../support/faults/workflows.js';

/** POSTs until the receiver accepts (503 and refused connections while Redis is away are retried). */
async function postUntilAccepted(url: string, body: string, deadlineMs = 30_000): Promise<number> {
  const end = Date.now() + deadlineMs;
  let tries = 0;
  for (;;) {
    tries++;
    const status = await deliver(url, body).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 202 || status === 200) return tries;
    if (status !== 503 && status !== 0) throw new Error(`delivery answered ${status}`);
    if (Date.now() > end) throw new Error('never accepted');
    await sleep(100);
  }
}

describe('durable workflows: Redis stopped or crashed and restarted on its data directory while runs are parked', () => {
  let redis: ManagedRedis | undefined;
  let dir: string | undefined;

  // Registered before the scene's: runs after it (a stack), so Redis stops once the rig is closed.
  afterEach(async () => {
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    redis = undefined;
    dir = undefined;
  });
  const open = workflowScenes();

  for (const how of ['stop', 'SIGKILL'] as const) {
    it(`${how === 'stop' ? 'stopped (SHUTDOWN)' : 'SIGKILLed'} for 1.5 s: sleeps, waits and cancelOn each end once, and nothing accepted is lost`, async () => {
      const SLEEP = 6_000;
      dir = mkdtempSync(join(tmpdir(), 'sy-wf-redis-'));
      redis = await startManagedRedis({ dir: join(dir, 'redis'), appendfsync: 'always' });
      const port = redis.port;
      const { rig: r, log: l, wf: w } = await open(`wfredis-${how === 'stop' ? 'stop' : 'kill'}`, redis.url);
      const receiver = await r.startReceiver();
      const worker = r.startWorker(
        wffEnv(r, l, { WFF_SLEEP_MS: String(SLEEP), WFF_CANCEL_SLEEP_MS: String(SLEEP), WFF_WAIT_TIMEOUT: '60s' }),
      );
      await worker.waitFor(/worker started/, 20_000);

      const sleepers = [98_001, 98_002, 98_003].map((c) => trigger('sleeper', c));
      const waiters = [98_101, 98_102, 98_103, 98_104].map((c) => trigger('waiter', c));
      const [cancelled, kept] = [98_201, 98_202].map((c) => trigger('cancel', c)) as [
        ReturnType<typeof trigger>,
        ReturnType<typeof trigger>,
      ];
      const all = [...sleepers, ...waiters, cancelled, kept];
      for (const t of all) await post(receiver.url, t.body);
      await waitFor(
        async () => {
          const parked = new Set((await w.parked()).map((p) => p.deliveryKey));
          return all.every((t) => parked.has(t.id));
        },
        15_000,
        50,
      );

      // Accepted just before the outage.
      const before = reply(98_101, 'before the outage');
      await post(receiver.url, before.body);
      if (how === 'stop') await redis.stop();
      else await killRedis(redis);
      // Sent during the outage: refused (503) until Redis is back, retried by the sender.
      const during = reply(98_102, 'during the outage');
      const sending = postUntilAccepted(receiver.url, during.body);
      await sleep(1_500);
      redis = await startManagedRedis({ dir: join(dir, 'redis'), port, appendfsync: 'always' });
      const upAt = Date.now();
      const tries = await sending;
      const after = reply(98_103, 'after the outage');
      await post(receiver.url, after.body);
      const stop = reply(98_201, 'cancel after the outage');
      await post(receiver.url, stop.body);

      const ends = [...sleepers, waiters[0], waiters[1], waiters[2], kept].map((t) => (t as { id: string }).id);
      await waitFor(() => ends.every((id) => l.count(id, 'done') >= 1), 30_000, 100);
      const cancelledBy = async () =>
        ((await w.job(cancelled.id, 'cancel'))?.returnvalue as { cancelled?: string } | null | undefined)?.cancelled;
      await waitFor(async () => (await cancelledBy()) !== undefined, 10_000, 50);
      await sleep(1_500);

      // Steps (before the wait, and the `woke` step after it) and API writes: exactly once. The plain code after
      // the wait (`done`) runs at least once: a resumed run whose job lock lapsed while Redis was away
      // (JOB_LOCK_DURATION 2 s here) is run again by BullMQ, and its replay makes no write (the run's memory).
      const seen = ends.map((id) => ({
        id,
        step: l.count(id, 'step'),
        woke: l.count(id, 'woke'),
        done: Math.min(1, l.count(id, 'done')),
        before: freshWrites(r, `before ${id}`),
        after: freshWrites(r, `after ${id}`),
        afterCalls: [...noteWrites(r).calls].filter(([b]) => b.startsWith(`after ${id}`)).reduce((n, [, c]) => n + c.keys.size, 0),
      }));
      expect(seen).toEqual(ends.map((id) => ({ id, step: 1, woke: 1, done: 1, before: 1, after: 1, afterCalls: 1 })));
      const again = ends.filter((id) => l.count(id, 'done') > 1).length;
      if (again > 0)
        console.log(
          `[wf-redis-${how}] ${again} run(s) ran their plain code after the wait again (lock lapsed during the outage); no write repeated`,
        );
      expect([0, 1, 2].map((i) => l.of((waiters[i] as { id: string }).id, 'done')[0]?.got)).toEqual([before.id, during.id, after.id]);
      for (const t of [...sleepers, kept]) {
        const due = (l.of(t.id, 'pre')[0] as { t: number }).t + SLEEP;
        const woke = (l.of(t.id, 'woke')[0] as { t: number }).t;
        expect(woke).toBeGreaterThanOrEqual(due - 5);
        expect(woke - Math.max(due, upAt)).toBeLessThan(3_000);
      }
      expect(await cancelledBy()).toBe(stop.id);
      expect({
        step: l.count(cancelled.id, 'step'),
        woke: l.count(cancelled.id, 'woke'),
        after: freshWrites(r, `after ${cancelled.id}`),
      }).toEqual({ step: 1, woke: 0, after: 0 });
      const fourth = (waiters[3] as { id: string }).id;
      expect(l.count(fourth, 'woke')).toBe(0);
      expect((await w.parked()).map((p) => p.deliveryKey)).toEqual([fourth]);
      expect(await w.failed()).toBe(0);
      expect(worker.child.exitCode).toBeNull();
      expect(receiver.proc.child.exitCode).toBeNull();
      console.log(`[wf-redis-${how}] reply during the outage accepted after ${tries} tries`);
    }, 90_000);
  }
});
