/**
 * Durable workflows under SIGKILL of the worker process (the built CLI,
 * `switchyard work`, beside a `switchyard serve` receiver and the sandbox):
 * runs parked in a sleep, in a waitForEvent and in a cancelOn-guarded sleep
 * when their worker dies resume in a new worker at the right time / on the
 * matching event (or are cancelled), their steps before the wait do not run
 * again, and the API write after the wait reaches the sandbox exactly once
 * (one fresh 201; every call of it with one Idempotency-Key).
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait.js';
import { sleep, type Rig } from '../../support/faults/rig.js';
import type { CliProcess } from '../../support/cli.js';
import {
  freshWrites,
  MarkLog,
  noteWrites,
  parkedAll,
  post,
  reply,
  trigger,
  WfRedis,
  wffEnv,
  workflowScenes,
} from '../../support/faults/workflows.js';

describe('durable workflows: the worker SIGKILLed while runs are parked', () => {
  const open = workflowScenes();

  async function setUp(label: string): Promise<{ rig: Rig; log: MarkLog; wf: WfRedis; url: string }> {
    const { rig, log, wf } = await open(label);
    const receiver = await rig.startReceiver();
    return { rig, log, wf, url: receiver.url };
  }

  async function worker(r: Rig, l: MarkLog, extra: Record<string, string>): Promise<CliProcess> {
    const w = r.startWorker(wffEnv(r, l, extra));
    await w.waitFor(/worker started/, 20_000);
    return w;
  }

  /** Every run of `ids`: its step once, its write before the wait once, its write after once, all with stable Idempotency-Keys. */
  function expectOnce(r: Rig, l: MarkLog, ids: string[]): void {
    const { calls } = noteWrites(r);
    const seen = ids.map((id) => ({
      id,
      step: l.count(id, 'step'),
      woke: l.count(id, 'woke'),
      done: l.count(id, 'done'),
      before: freshWrites(r, `before ${id}`),
      after: freshWrites(r, `after ${id}`),
      // Every call of one write (first and any replays) carried one Idempotency-Key.
      afterKeys: [...calls].filter(([b]) => b.startsWith(`after ${id}`)).reduce((s, [, c]) => s + c.keys.size, 0),
    }));
    expect(seen).toEqual(ids.map((id) => ({ id, step: 1, woke: 1, done: 1, before: 1, after: 1, afterKeys: 1 })));
  }

  for (const restart of ['before', 'after'] as const) {
    it(`sleep: killed mid-sleep and restarted ${restart} the due time, each run wakes once, not before its due time, without re-running its step or writes`, async () => {
      // Long enough that a new worker (a couple of seconds to start; more on a busy machine, as when
      // the fault suite runs beside the other projects) is up before it is due.
      const SLEEP = restart === 'before' ? 10_000 : 2_000;
      const { rig: r, log: l, wf: w, url } = await setUp(`wfkill-sleep-${restart}`);
      const first = await worker(r, l, { WFF_SLEEP_MS: String(SLEEP) });
      const runs = Array.from({ length: 5 }, (_, i) => trigger('sleeper', 91_000 + i));
      for (const t of runs) await post(url, t.body);
      const ids = runs.map((t) => t.id);
      await parkedAll(w, ids);
      expect(await first.stop('SIGKILL')).toBeNull();
      // Down for a moment, or until every sleep is over.
      await sleep(restart === 'before' ? 200 : SLEEP + 500);
      const second = await worker(r, l, { WFF_SLEEP_MS: String(SLEEP) });
      const upAt = Date.now();
      await waitFor(() => ids.every((id) => l.count(id, 'done') >= 1), 20_000, 50);
      await sleep(1_500); // a late repeat would show up here
      expectOnce(r, l, ids);
      for (const id of ids) {
        const pre = l.of(id, 'pre');
        // Before the sleep once, and once more in the replay that went past it.
        expect(pre).toHaveLength(2);
        const due = (pre[0] as { t: number }).t + SLEEP;
        const woke = l.of(id, 'woke')[0] as { t: number; pid: number };
        if (restart === 'before') expect(upAt).toBeLessThan(due);
        // Never early; on time when the new worker was up before the due time, at once when it came up after.
        expect(woke.t).toBeGreaterThanOrEqual(due - 5);
        expect(woke.t - Math.max(due, upAt)).toBeLessThan(1_500);
        expect(woke.pid).toBe(second.child.pid);
        expect(await w.state(id, 'sleeper')).toBe('completed');
      }
      expect(await w.parked()).toEqual([]);
      expect(await w.failed()).toBe(0);
    }, 60_000);
  }

  it('sleep: killed right after its write after the sleep (before the run is recorded done): the rerun sends that write again under the same Idempotency-Key, answered as a replay', async () => {
    const { rig: r, log: l, wf: w, url } = await setUp('wfkill-afterwrite');
    const first = await worker(r, l, { WFF_SLEEP_MS: '1500', WFF_LINGER_MS: '60000' });
    const run = trigger('sleeper', 91_500);
    await post(url, run.body);
    await waitFor(() => freshWrites(r, `after ${run.id}`) === 1, 15_000, 50);
    expect(await first.stop('SIGKILL')).toBeNull();
    await worker(r, l, { WFF_SLEEP_MS: '1500' });
    // Its lock lapses (2 s), the stalled job runs again.
    await waitFor(() => l.count(run.id, 'done') >= 1, 20_000, 50);
    await sleep(1_000);
    const after = noteWrites(r).calls.get(`after ${run.id}`);
    expect({
      calls: after?.n,
      keys: after?.keys.size,
      fresh: freshWrites(r, `after ${run.id}`),
      before: freshWrites(r, `before ${run.id}`),
    }).toEqual({ calls: 2, keys: 1, fresh: 1, before: 1 });
    const replays = r.collector
      .entries()
      .filter((e) => (e.body as { body?: string } | null)?.body === `after ${run.id}`)
      .map((e) => [e.status, e.replay]);
    expect(replays).toEqual([
      [201, false],
      [201, true],
    ]);
    // Its steps ran once (the `woke` step was recorded before the kill).
    expect({ step: l.count(run.id, 'step'), woke: l.count(run.id, 'woke'), done: l.count(run.id, 'done') }).toEqual({
      step: 1,
      woke: 1,
      done: 1,
    });
    expect(await w.state(run.id, 'sleeper')).toBe('completed');
    expect(await w.failed()).toBe(0);
  }, 60_000);

  it('waitForEvent: its timeout passes while no worker runs: after the restart it returns null once and writes once', async () => {
    const { rig: r, log: l, wf: w, url } = await setUp('wfkill-timeout');
    const first = await worker(r, l, { WFF_WAIT_TIMEOUT: '2s' });
    const run = trigger('waiter', 92_500);
    await post(url, run.body);
    await waitFor(async () => (await w.parked()).some((p) => p.deliveryKey === run.id), 15_000, 50);
    const parkedAt = Date.now();
    expect(await first.stop('SIGKILL')).toBeNull();
    await sleep(2_500);
    await worker(r, l, { WFF_WAIT_TIMEOUT: '2s' });
    await waitFor(() => l.count(run.id, 'done') >= 1, 15_000, 50);
    // A reply after the timeout changes nothing.
    await post(url, reply(92_500, 'too late').body);
    await sleep(1_500);
    expectOnce(r, l, [run.id]);
    expect(l.of(run.id, 'woke').map((m) => m.got)).toEqual(['timeout']);
    expect((l.of(run.id, 'woke')[0] as { t: number }).t - parkedAt).toBeGreaterThanOrEqual(2_000);
    expect(await w.state(run.id, 'waiter')).toBe('completed');
    expect(await w.parked()).toEqual([]);
    expect(await w.failed()).toBe(0);
  }, 60_000);

  it('waitForEvent: killed mid-wait; replies sent while no worker runs and after the restart wake exactly their runs, once', async () => {
    const { rig: r, log: l, wf: w, url } = await setUp('wfkill-wait');
    const first = await worker(r, l, { WFF_WAIT_TIMEOUT: '60s' });
    const convs = [92_001, 92_002, 92_003, 92_004];
    const runs = convs.map((c) => trigger('waiter', c));
    for (const t of runs) await post(url, t.body);
    const ids = runs.map((t) => t.id);
    await parkedAll(w, ids);
    expect(await first.stop('SIGKILL')).toBeNull();

    // While no worker runs: replies for the first two (kept in the events queue).
    const early = [reply(92_001, 'early 1'), reply(92_002, 'early 2')];
    for (const e of early) await post(url, e.body);
    await sleep(300);
    const second = await worker(r, l, { WFF_WAIT_TIMEOUT: '60s' });
    await waitFor(() => [ids[0], ids[1]].every((id) => l.count(id as string, 'done') >= 1), 15_000, 50);
    // After the restart: a reply for the third.
    const late = reply(92_003, 'late 3');
    await post(url, late.body);
    await waitFor(() => l.count(ids[2] as string, 'done') >= 1, 15_000, 50);
    // A second reply to an answered conversation wakes nothing.
    await post(url, reply(92_001, 'again').body);
    await sleep(1_500);

    const answered = ids.slice(0, 3);
    expectOnce(r, l, answered);
    expect(answered.map((id) => l.of(id, 'done')[0]?.got)).toEqual([early[0]?.id, early[1]?.id, late.id]);
    for (const id of answered) {
      expect(l.count(id, 'pre')).toBe(2);
      expect(await w.state(id, 'waiter')).toBe('completed');
    }
    // The fourth got no reply: still parked, never woken, its step once.
    const fourth = ids[3] as string;
    expect(l.count(fourth, 'woke')).toBe(0);
    expect(l.count(fourth, 'step')).toBe(1);
    expect(freshWrites(r, `before ${fourth}`)).toBe(1);
    expect(await w.state(fourth, 'waiter')).toBe('delayed');
    expect((await w.parked()).map((p) => p.deliveryKey)).toEqual([fourth]);
    expect(await w.failed()).toBe(0);
    expect(second.child.exitCode).toBeNull();
  }, 60_000);

  it('cancelOn: a cancelling event sent while the worker is dead cancels the sleeping run exactly once, with no write after the sleep', async () => {
    // Long enough that the new worker is up well before the sleep is due (a backlog still unprocessed at the due
    // time is the hold's case below).
    const SLEEP = 12_000;
    const { rig: r, log: l, wf: w, url } = await setUp('wfkill-cancel');
    const workers: CliProcess[] = [];
    workers.push(await worker(r, l, { WFF_CANCEL_SLEEP_MS: String(SLEEP) }));
    const [dead, control] = [93_001, 93_003].map((c) => trigger('cancel', c)) as [ReturnType<typeof trigger>, ReturnType<typeof trigger>];
    for (const t of [dead, control]) await post(url, t.body);
    await parkedAll(w, [dead.id, control.id]);
    const parkedAt = Date.now();
    expect(await (workers[0] as CliProcess).stop('SIGKILL')).toBeNull();
    // The cancelling event is sent while no worker runs (kept in the inbox).
    const stop = reply(93_001, 'stop while dead');
    await post(url, stop.body);
    await sleep(200);
    workers.push(await worker(r, l, { WFF_CANCEL_SLEEP_MS: String(SLEEP) }));
    expect(Date.now()).toBeLessThan(parkedAt + SLEEP - 2_000);

    const cancelledBy = async (id: string) =>
      ((await w.job(id, 'cancel'))?.returnvalue as { cancelled?: string } | null | undefined)?.cancelled;
    await waitFor(async () => (await cancelledBy(dead.id)) !== undefined, 15_000, 50);
    // The control run (no cancel) completes after its sleep; wait past every due time for any late write.
    await waitFor(() => l.count(control.id, 'done') >= 1, 15_000, 50);
    await sleep(Math.max(0, parkedAt + SLEEP + 1_500 - Date.now()));

    expect(await cancelledBy(dead.id)).toBe(stop.id);
    expect({
      step: l.count(dead.id, 'step'),
      woke: l.count(dead.id, 'woke'),
      before: freshWrites(r, `before ${dead.id}`),
      after: freshWrites(r, `after ${dead.id}`),
    }).toEqual({ step: 1, woke: 0, before: 1, after: 0 });
    expect(await w.state(dead.id, 'cancel')).toBe('completed');
    const output = workers.map((p) => p.output()).join('\n');
    expect(output.split('\n').filter((line) => line.includes('run cancelled by a cancelOn event') && line.includes(dead.id))).toHaveLength(
      1,
    );
    expectOnce(r, l, [control.id]);
    expect(await w.parked()).toEqual([]);
    expect(await w.failed()).toBe(0);
  }, 60_000);
});

/**
 * Once an engine gap, now the due-time hold (src/worker/hold.ts), in two forms: a delivery
 * accepted (202) before a run's sleep or wait falls due but not fanned out yet at that time.
 *
 * (a) Backlog: a cancel accepted while no worker runs waits in the inbox; the worker comes back
 * after the sleep fell due. The resumed run must not go past its sleep before the cancel is
 * fanned out.
 *
 * (b) A delivery in the ingest pump's in-flight list of a worker process that was SIGKILLed
 * reaches fan-out only once another pump recovers the list (its heartbeat lapses: 15–20 s). A
 * sleep or wait due in between is held until then: cancelOn cancels, waitForEvent returns the
 * reply (the pending fan-out set is marked by the ingest script, so it covers the inbox and the
 * in-flight lists, and a due run holds while its oldest entry was received at or before the due
 * time).
 *
 * Deterministic repro of (b): the worker is frozen (SIGSTOP) while its pump blocks in BLMOVE, so
 * Redis hands the accepted delivery to the frozen pump's in-flight list; then it is SIGKILLed and
 * a new worker starts.
 */
describe("an event accepted before the due time but stuck in the inbox or a killed worker's pump still answers cancelOn / waitForEvent", () => {
  const open = workflowScenes();

  it('a cancel accepted while no worker runs cancels a run whose sleep fell due meanwhile: on restart the run is held until the cancel is fanned out', async () => {
    const SLEEP = 2_000;
    const { rig: r, log: l, wf: w } = await open('wfbug-backlog');
    const { url } = await r.startReceiver();
    const env = wffEnv(r, l, { WFF_CANCEL_SLEEP_MS: String(SLEEP) });
    const first = r.startWorker(env);
    await first.waitFor(/worker started/, 20_000);
    const run = trigger('cancel', 94_101);
    await post(url, run.body);
    await waitFor(async () => (await w.parked()).some((p) => p.deliveryKey === run.id), 15_000, 50);
    const parkedAt = Date.now();
    expect(await first.stop('SIGKILL')).toBeNull();
    // Accepted (202) while the run sleeps and no worker runs: it waits in the inbox.
    const stop = reply(94_101, 'stop');
    await post(url, stop.body);
    expect(Date.now()).toBeLessThan(parkedAt + SLEEP);
    await sleep(Math.max(0, parkedAt + SLEEP + 500 - Date.now()));
    // The worker comes back after the due time: the due run is held until the backlog's cancel is fanned out.
    const second = r.startWorker(env);
    await second.waitFor(/worker started/, 20_000);
    await waitFor(async () => (await w.state(run.id, 'cancel')) === 'completed', 20_000, 50);
    await sleep(500);
    const result = (await w.job(run.id, 'cancel'))?.returnvalue as { cancelled?: string } | undefined;
    expect({ cancelledBy: result?.cancelled, after: freshWrites(r, `after ${run.id}`) }).toEqual({ cancelledBy: stop.id, after: 0 });
  }, 60_000);

  for (const kind of ['cancel', 'waiter'] as const) {
    it(`${kind === 'cancel' ? 'cancelOn: the run is cancelled and makes no write after the sleep' : 'waitForEvent returns the reply, not null (timeout)'}`, async () => {
      const DUE = 4_000;
      const { prefix, rig: r, log: l, wf: w } = await open(`wfbug-${kind}`);
      const { url } = await r.startReceiver();
      const env = wffEnv(r, l, { WFF_CANCEL_SLEEP_MS: String(DUE), WFF_WAIT_TIMEOUT: `${DUE}ms` });
      const first = r.startWorker(env);
      await first.waitFor(/worker started/, 20_000);
      const run = trigger(kind, 94_001);
      await post(url, run.body);
      await waitFor(async () => (await w.parked()).some((p) => p.deliveryKey === run.id), 15_000, 50);
      const parkedAt = Date.now();

      // Frozen with its pump blocked in BLMOVE: the accepted reply goes to that pump's in-flight list.
      first.child.kill('SIGSTOP');
      const answer = reply(94_001, 'answer');
      await post(url, answer.body);
      const acceptedAt = Date.now();
      await waitFor(
        async () =>
          (await w.redis.keys(`${prefix}:ingest:inflight:*`)).length > 0 &&
          (await Promise.all((await w.redis.keys(`${prefix}:ingest:inflight:*`)).map((k) => w.redis.lrange(k, 0, -1))))
            .flat()
            .some((item) => item.includes(answer.id)),
        5_000,
        20,
      );
      expect(await first.stop('SIGKILL')).toBeNull();
      const second = r.startWorker(env);
      await second.waitFor(/worker started/, 20_000);
      // The reply was accepted (202) well before the run was due.
      expect(acceptedAt).toBeLessThan(parkedAt + DUE - 1_000);

      await waitFor(async () => (await w.state(run.id, kind)) === 'completed', 20_000, 50);
      await sleep(500);
      if (kind === 'cancel') {
        const result = (await w.job(run.id, 'cancel'))?.returnvalue as { cancelled?: string } | undefined;
        expect({ cancelledBy: result?.cancelled, after: freshWrites(r, `after ${run.id}`) }).toEqual({ cancelledBy: answer.id, after: 0 });
      } else {
        expect(l.of(run.id, 'done').map((m) => m.got)).toEqual([answer.id]);
      }
    }, 60_000);
  }
});
