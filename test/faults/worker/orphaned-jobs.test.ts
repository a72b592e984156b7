/**
 * (f) Jobs orphaned by a SIGKILL run again in time. `switchyard start` is
 * SIGKILLed while several `handlers` jobs are mid-retry: each note write was
 * answered 500 and its retry is held open by a proxy, so nothing was written
 * (a missed re-run is a lost write). `start` runs again RESTART_MS later, within
 * one lock duration, as the bound assumes. Every orphaned job must run again and
 * write its note exactly once within the documented bound after the kill:
 * JOB_LOCK_DURATION for the dead worker's lock to lapse, plus two ticks of the
 * stalled check (BullMQ moves a job back only when one check marked it and a
 * later one finds it still unlocked). The bound for the default lock (30 s) is
 * 45 s; the first scenario sets JOB_LOCK_DURATION to SHORT_LOCK_MS (the setting a
 * deployment would change) and holds the bound that follows from it, 15 s
 * (test/README.md, "Suite time").
 *
 * Second scenario: the shared rate limiter's whole window (WORKSPACE_API_BURST)
 * is held by the killed process's in-flight calls, so the restarted worker
 * also waits for those slots to be given up. A slot in flight is held for the
 * API request timeout (30 s, not a setting), which the default lock covers and a
 * shorter one does not: this scenario keeps the default lock. What the bound
 * promises (README, JOB_LOCK_DURATION) is that each job *runs again* within it:
 * here a worker must take every orphaned job within the bound (BullMQ's
 * `processedOn`), and each then writes once, at the pace of the 4-call window
 * it shares (the writes come up to a window's pacing after the run; on a quiet
 * machine 37–42 s after the kill, or 44–49 s when the stalled check's phase
 * falls late), which the bound does not count.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { orphanRecoveryBoundMs } from '../../../src/runtime/worker-options.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { startHoldProxy, type HoldProxy } from '../../support/faults/hold-proxy.js';
import { createRig, sendAll, sleep, type Rig, type Send } from '../../support/faults/rig.js';

const RESTART_MS = 6_000;
/** JOB_LOCK_DURATION's default. */
const DEFAULT_LOCK_MS = 30_000;
/** JOB_LOCK_DURATION of the first scenario: longer than RESTART_MS, as the bound assumes. */
const SHORT_LOCK_MS = 10_000;
/** What the bound does not count: moving the job back, picking it up, the write's round trip, timer drift. */
const MARGIN_MS = 2_000;

describe('jobs orphaned by a SIGKILL of `switchyard start`', () => {
  let rig: Rig | undefined;
  let proxy: HoldProxy | undefined;
  afterEach(async () => {
    await rig?.close();
    await proxy?.close();
    rig = undefined;
    proxy = undefined;
  });

  it('the documented bound for the default lock is 45 s (15 s for a 10 s lock)', () => {
    expect(orphanRecoveryBoundMs(DEFAULT_LOCK_MS)).toBe(45_000);
    expect(orphanRecoveryBoundMs(SHORT_LOCK_MS)).toBe(15_000);
    expect(RESTART_MS).toBeLessThan(SHORT_LOCK_MS);
  });

  it('8 jobs killed mid-retry (write not applied) run again and write once within the bound', async () => {
    ({ rig, proxy } = await setUp('orphan'));
    await scenario(rig, proxy, { jobs: 8, lockMs: SHORT_LOCK_MS, name: 'orphaned jobs: SIGKILL mid-retry, write not applied' });
  }, 150_000);

  it('the same when the killed process held every rate-limiter slot in flight', async () => {
    ({ rig, proxy } = await setUp('orphan-rl'));
    await scenario(rig, proxy, {
      jobs: 4,
      env: { WORKSPACE_API_BURST: '4' },
      name: 'orphaned jobs: SIGKILL holding the whole rate-limit window',
      bounded: 'run',
    });
  }, 150_000);
});

async function setUp(label: string): Promise<{ rig: Rig; proxy: HoldProxy }> {
  const rig = await createRig({ prefix: uniquePrefix(label), redisUrl: testRedisUrl() });
  return { rig, proxy: await startHoldProxy(rig.api) };
}

/** `lockMs`: the JOB_LOCK_DURATION set (none: the default, 30 s). */
async function scenario(
  rig: Rig,
  proxy: HoldProxy,
  o: { jobs: number; lockMs?: number; env?: Record<string, string>; name: string; bounded?: 'write' | 'run' },
): Promise<void> {
  const started = Date.now();
  const BOUND_MS = orphanRecoveryBoundMs(o.lockMs ?? DEFAULT_LOCK_MS);
  const env = { WORKSPACE_API_URL: proxy.baseUrl, ...(o.lockMs ? { JOB_LOCK_DURATION: `${o.lockMs / 1000}s` } : {}), ...o.env };
  const first = await rig.startService(env);
  const sends: Send[] = Array.from({ length: o.jobs }, () => {
    const body = messageBody('message.received', rig.conv);
    return { id: deliveryId(body), body, to: 0 };
  });
  const result = await sendAll(sends, () => [first.url], { concurrency: o.jobs });
  expect(result.acked.size).toBe(o.jobs);

  // Every job had its first attempt answered 500 and waits for its retry's answer.
  await waitUntil(() => proxy.held.size === o.jobs, 30_000);
  const killedAt = Date.now();
  expect(await first.proc.stop('SIGKILL')).toBeNull();
  proxy.release();
  rig.collector.harvest();
  expect(rig.collector.entries(), 'no note was written before the kill').toEqual([]);

  await sleep(RESTART_MS - (Date.now() - killedAt));
  await rig.startService(env, first.port);

  const ids = sends.map((s) => s.id);
  const firstWrite = (id: string) => proxy.writes.find((w) => w.id === id && w.status === 201 && !w.replay)?.at;
  await waitUntil(() => ids.every((id) => firstWrite(id) !== undefined), BOUND_MS + MARGIN_MS + 30_000).catch(() => undefined);
  const recovery = ids.map((id) => firstWrite(id) ?? Infinity).map((at) => at - killedAt);
  const s = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'never');
  console.log(
    `[faults] ${o.name}: ${o.jobs} jobs, restart after ${RESTART_MS / 1000} s; written again after the kill min=${s(Math.min(...recovery))} max=${s(Math.max(...recovery))} (bound ${s(BOUND_MS)} + ${s(MARGIN_MS)} margin)`,
  );

  const r = await rig.reconcile(o.name, ids, result.acked, { startedAt: started, timeoutMs: 1_000, settleMs: 2_000 });
  expect({ lost: r.lostIds, repeated: r.repeatedIds, unexpected: r.unexpected, failedJobs: r.failedJobs }).toEqual({
    lost: [],
    repeated: [],
    unexpected: 0,
    failedJobs: 0,
  });
  const taken = await rig.lastTaken(ids);
  const ranAgain = ids.map((id) => (taken.get(id) ?? Infinity) - killedAt);
  console.log(`[faults] ${o.name}: taken again after the kill min=${s(Math.min(...ranAgain))} max=${s(Math.max(...ranAgain))}`);
  expect(Math.max(...ranAgain), 'a worker took every orphaned job again within the bound after the kill').toBeLessThanOrEqual(
    BOUND_MS + MARGIN_MS,
  );
  if ((o.bounded ?? 'write') === 'write') {
    expect(Math.max(...recovery), 'every orphaned job wrote its note within the bound after the kill').toBeLessThanOrEqual(
      BOUND_MS + MARGIN_MS,
    );
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(50);
  }
}
