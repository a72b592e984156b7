/**
 * Durable workflows under repeated SIGKILLs of workers at arbitrary moments
 * (mid-handler, while a run registers its wait, saves its record or is being
 * parked, while a wake-up is being fanned out), two `switchyard work`
 * processes at a time, one killed and replaced every 0.6–1.4 s for ~10 s,
 * while runs sleep, wait for replies and are cancelled. Afterwards: every
 * run ended, its write before and its write after the wait each reached the
 * sandbox exactly once (fresh 201), each under one Idempotency-Key; a
 * cancelled run made no write after its sleep. Steps run at least once; a
 * step that ran twice is reported (a kill between its body and its record is
 * allowed to repeat it).
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../support/wait.js';
import { shuffle, sleep } from '../../support/faults/rig.js';
import type { CliProcess } from '../../support/cli.js';
import { freshWrites, noteWrites, post, reply, trigger, wffEnv, workflowScenes } from '../../support/faults/workflows.js';

describe('durable workflows: workers SIGKILLed again and again while runs sleep, wait and are cancelled', () => {
  const open = workflowScenes();

  it('no run lost, no write repeated, no cancelled run writes', async () => {
    const seed = Number(process.env['WFF_SEED'] ?? Date.now() % 100_000);
    let s = seed;
    const rand = () => {
      s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
      return s / 2_147_483_648;
    };
    const { rig: r, log: l, wf: w } = await open('wfchaos');
    const { url } = await r.startReceiver();
    // Cancellers sleep long enough that their cancel always comes first, even one held ~20 s in a killed
    // worker's pump (the due-time hold of workflow-kill.test.ts is not what this test is about).
    const env = wffEnv(r, l, { WFF_SLEEP_MS: '1500', WFF_CANCEL_SLEEP_MS: '45000', WFF_WAIT_TIMEOUT: '90s' });
    const live: CliProcess[] = [];
    const killed: number[] = [];
    const spawn = () => {
      const p = r.startWorker(env);
      live.push(p);
      return p;
    };
    await Promise.all([spawn(), spawn()].map((p) => p.waitFor(/worker started/, 30_000)));

    const sleepers = Array.from({ length: 30 }, (_, i) => trigger('sleeper', 99_000 + i));
    const waiters = Array.from({ length: 30 }, (_, i) => trigger('waiter', 99_100 + i));
    const cancels = Array.from({ length: 10 }, (_, i) => trigger('cancel', 99_200 + i));
    const replies = new Map<string, string>();
    const started = Date.now();
    let chaosOver = false;

    const chaos = (async () => {
      while (Date.now() - started < 10_000) {
        await sleep(600 + Math.floor(rand() * 800));
        const victim = live.splice(Math.floor(rand() * live.length), 1)[0] as CliProcess;
        killed.push(victim.child.pid ?? 0);
        await victim.stop('SIGKILL');
        spawn();
      }
      chaosOver = true;
    })();
    // Triggers in a shuffled stream; each waiter's and canceller's message 0–1.5 s after its trigger.
    const traffic = (async () => {
      const pending: Promise<void>[] = [];
      for (const t of shuffle([...sleepers, ...waiters, ...cancels], seed)) {
        await post(url, t.body);
        const conv = (JSON.parse(t.body) as { data: { id: number } }).data.id;
        if (waiters.includes(t) || cancels.includes(t)) {
          pending.push(
            (async () => {
              await sleep(Math.floor(rand() * 1_500));
              const m = reply(conv, `to ${t.id}`);
              replies.set(t.id, m.id);
              await post(url, m.body);
            })(),
          );
        }
        await sleep(Math.floor(rand() * 120));
      }
      await Promise.all(pending);
    })();
    await Promise.all([chaos, traffic]);
    expect(chaosOver).toBe(true);
    await Promise.all(live.map((p) => p.waitFor(/worker started/, 30_000)));

    const cancelledBy = async (id: string) =>
      ((await w.job(id, 'cancel'))?.returnvalue as { cancelled?: string } | null | undefined)?.cancelled;
    // Orphaned jobs come back once their lock lapses; a killed pump's deliveries once its heartbeat does (~20 s).
    await waitFor(
      async () => {
        if (![...sleepers, ...waiters].every((t) => l.count(t.id, 'done') >= 1)) return false;
        for (const t of cancels) if ((await cancelledBy(t.id)) === undefined) return false;
        return true;
      },
      60_000,
      250,
    ).catch(() => undefined);
    await sleep(2_000);

    const { calls } = noteWrites(r);
    const keysOf = (prefixText: string) => [...calls].filter(([b]) => b.startsWith(prefixText)).reduce((n, [, c]) => n + c.keys.size, 0);
    const problems: string[] = [];
    for (const t of [...sleepers, ...waiters]) {
      const got = {
        done: l.count(t.id, 'done') >= 1,
        before: freshWrites(r, `before ${t.id}`),
        after: freshWrites(r, `after ${t.id}`),
        beforeKeys: keysOf(`before ${t.id}`),
        afterKeys: keysOf(`after ${t.id}`),
      };
      if (!got.done || got.before !== 1 || got.after !== 1 || got.beforeKeys !== 1 || got.afterKeys !== 1)
        problems.push(`${t.id}: ${JSON.stringify(got)}`);
      if (waiters.includes(t) && l.of(t.id, 'woke')[0]?.got !== replies.get(t.id))
        problems.push(`${t.id}: got ${l.of(t.id, 'woke')[0]?.got}, expected ${replies.get(t.id)}`);
      if ((await w.state(t.id, waiters.includes(t) ? 'waiter' : 'sleeper')) !== 'completed')
        problems.push(`${t.id}: job ${await w.state(t.id, waiters.includes(t) ? 'waiter' : 'sleeper')}`);
    }
    for (const t of cancels) {
      const by = await cancelledBy(t.id);
      const got = { by, woke: l.count(t.id, 'woke'), after: freshWrites(r, `after ${t.id}`), before: freshWrites(r, `before ${t.id}`) };
      if (by !== replies.get(t.id) || got.woke !== 0 || got.after !== 0 || got.before !== 1)
        problems.push(`${t.id} (cancel): ${JSON.stringify(got)}`);
    }
    const all = [...sleepers, ...waiters, ...cancels];
    const stepTwice = all.filter((t) => l.count(t.id, 'step') > 1).length;
    const wokeTwice = all.filter((t) => l.count(t.id, 'woke') > 1).length;
    const doneTwice = all.filter((t) => l.count(t.id, 'done') > 1).length;
    console.log(
      `[wf-chaos] seed ${seed}: ${all.length} runs, ${killed.length} kills in ${((Date.now() - started) / 1000).toFixed(1)} s; steps run twice ${stepTwice}, woke steps twice ${wokeTwice}, post-wait code twice ${doneTwice}; problems ${problems.length}`,
    );
    expect(problems).toEqual([]);
    expect(await w.parked()).toEqual([]);
    expect(await w.failed()).toBe(0);
  }, 150_000);
});
