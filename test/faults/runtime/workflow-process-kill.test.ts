/**
 * Durable workflows when the other processes die: the receiver (`switchyard
 * serve`) SIGKILLed while runs sleep and wait beside a `switchyard work`, and
 * the combined `switchyard start` (receiver, pump and worker in one process)
 * SIGKILLed while runs sleep, wait and are guarded by cancelOn, each time
 * right after a delivery was accepted. Nothing is lost: every run wakes once
 * (on time, on its reply, or cancelled), its steps before the wait ran once,
 * and its write after the wait reached the sandbox exactly once.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait.js';
import { sleep, type Rig } from '../../support/faults/rig.js';
import { freshWrites, MarkLog, parkedAll, post, reply, trigger, wffEnv, workflowScenes } from '../../support/faults/workflows.js';

describe('durable workflows: the receiver or the combined start process SIGKILLed while runs are parked', () => {
  const open = workflowScenes();

  function once(r: Rig, l: MarkLog, ids: string[]): void {
    expect(
      ids.map((id) => ({
        id,
        step: l.count(id, 'step'),
        woke: l.count(id, 'woke'),
        done: l.count(id, 'done'),
        before: freshWrites(r, `before ${id}`),
        after: freshWrites(r, `after ${id}`),
      })),
    ).toEqual(ids.map((id) => ({ id, step: 1, woke: 1, done: 1, before: 1, after: 1 })));
  }

  it('serve SIGKILLed right after accepting a reply, and replaced: sleeping and waiting runs all wake once', async () => {
    const SLEEP = 4_000;
    const { rig: r, log: l, wf: w } = await open('wfkill-recv');
    const first = await r.startReceiver();
    const worker = r.startWorker(wffEnv(r, l, { WFF_SLEEP_MS: String(SLEEP), WFF_WAIT_TIMEOUT: '60s' }));
    await worker.waitFor(/worker started/, 20_000);
    const sleepers = [96_001, 96_002, 96_003].map((c) => trigger('sleeper', c));
    const waiters = [96_101, 96_102, 96_103].map((c) => trigger('waiter', c));
    for (const t of [...sleepers, ...waiters]) await post(first.url, t.body);
    await parkedAll(
      w,
      [...sleepers, ...waiters].map((t) => t.id),
    );
    const parkedAt = Date.now();

    // Accepted, then the receiver dies at once.
    const r1 = reply(96_101, 'accepted before the kill');
    await post(first.url, r1.body);
    expect(await first.proc.stop('SIGKILL')).toBeNull();
    const second = await r.startReceiver();
    const r2 = reply(96_102, 'to the new receiver');
    await post(second.url, r2.body);

    const answered = [waiters[0], waiters[1]].map((t) => (t as { id: string }).id);
    await waitFor(() => [...sleepers.map((t) => t.id), ...answered].every((id) => l.count(id, 'done') >= 1), 20_000, 50);
    await sleep(1_500);
    once(r, l, [...sleepers.map((t) => t.id), ...answered]);
    expect(answered.map((id) => l.of(id, 'done')[0]?.got)).toEqual([r1.id, r2.id]);
    for (const t of sleepers)
      expect((l.of(t.id, 'woke')[0] as { t: number }).t).toBeGreaterThanOrEqual((l.of(t.id, 'pre')[0] as { t: number }).t + SLEEP - 5);
    expect(Date.now() - parkedAt).toBeLessThan(20_000);
    // The third waiter got nothing: still parked, never woken.
    const third = (waiters[2] as { id: string }).id;
    expect(l.count(third, 'woke')).toBe(0);
    expect((await w.parked()).map((p) => p.deliveryKey)).toEqual([third]);
    expect(await w.failed()).toBe(0);
    expect(worker.child.exitCode).toBeNull();
  }, 60_000);

  it('start (receiver + worker) SIGKILLed right after accepting a reply, and restarted on the same port: sleeps, waits and cancelOn all end once', async () => {
    const SLEEP = 6_000;
    const { rig: r, log: l, wf: w } = await open('wfkill-start');
    const env = wffEnv(r, l, { WFF_SLEEP_MS: String(SLEEP), WFF_CANCEL_SLEEP_MS: String(SLEEP), WFF_WAIT_TIMEOUT: '60s' });
    const first = await r.startService(env);
    const sleepers = [97_001, 97_002].map((c) => trigger('sleeper', c));
    const waiters = [97_101, 97_102, 97_103].map((c) => trigger('waiter', c));
    const [cancelled, kept] = [97_201, 97_202].map((c) => trigger('cancel', c)) as [ReturnType<typeof trigger>, ReturnType<typeof trigger>];
    const all = [...sleepers, ...waiters, cancelled, kept];
    for (const t of all) await post(first.url, t.body);
    await parkedAll(
      w,
      all.map((t) => t.id),
    );

    // A reply accepted, then the whole process dies (it may be in its own pump's hands: recovered later, not lost).
    const r1 = reply(97_101, 'accepted before the kill');
    await post(first.url, r1.body);
    expect(await first.proc.stop('SIGKILL')).toBeNull();
    await sleep(200);
    const restarted = await r.startService(env, first.port);
    const upAt = Date.now();
    const r2 = reply(97_102, 'after the restart');
    await post(restarted.url, r2.body);
    const stop = reply(97_201, 'cancel after the restart');
    await post(restarted.url, stop.body);

    const ends = [...sleepers, waiters[0], waiters[1], kept].map((t) => (t as { id: string }).id);
    // The reply accepted before the kill can take until the dead pump's heartbeat lapses (15–20 s) to reach fan-out.
    await waitFor(() => ends.every((id) => l.count(id, 'done') >= 1), 40_000, 100);
    const cancelledBy = async () =>
      ((await w.job(cancelled.id, 'cancel'))?.returnvalue as { cancelled?: string } | null | undefined)?.cancelled;
    await waitFor(async () => (await cancelledBy()) !== undefined, 10_000, 50);
    await sleep(1_500);

    once(r, l, ends);
    expect([waiters[0], waiters[1]].map((t) => l.of((t as { id: string }).id, 'done')[0]?.got)).toEqual([r1.id, r2.id]);
    // When r1 was fanned out: it woke the first waiter.
    const r1FannedOut = (l.of((waiters[0] as { id: string }).id, 'woke')[0] as { t: number }).t;
    for (const t of [...sleepers, kept]) {
      const due = (l.of(t.id, 'pre')[0] as { t: number }).t + SLEEP;
      const woke = (l.of(t.id, 'woke')[0] as { t: number }).t;
      expect(woke).toBeGreaterThanOrEqual(due - 5);
      if (t === kept) {
        // A sleep guarded by cancelOn is held past its due time while a delivery received before it is not fanned
        // out yet (src/worker/hold.ts): r1, when it was in the killed process's pump, until that list is recovered;
        // it could have been its cancel. Then it wakes within a hold step (at most 2 s).
        expect(woke - Math.max(due, upAt, r1FannedOut < due ? 0 : r1FannedOut)).toBeLessThan(2_500);
      } else {
        // A plain sleep is never held.
        expect(woke - Math.max(due, upAt)).toBeLessThan(1_500);
      }
    }
    expect(await cancelledBy()).toBe(stop.id);
    expect({
      step: l.count(cancelled.id, 'step'),
      woke: l.count(cancelled.id, 'woke'),
      after: freshWrites(r, `after ${cancelled.id}`),
    }).toEqual({ step: 1, woke: 0, after: 0 });
    const third = (waiters[2] as { id: string }).id;
    expect(l.count(third, 'woke')).toBe(0);
    expect((await w.parked()).map((p) => p.deliveryKey)).toEqual([third]);
    expect(await w.failed()).toBe(0);
    expect(restarted.proc.child.exitCode).toBeNull();
  }, 90_000);
});
