/**
 * Cancelling a parked run at the moment it wakes (src/queue/waits/ops.ts): its
 * awaited event arriving, or a `waits wake`, at the same time as the cancel,
 * many runs at once. Whatever the order, a run is either cancelled (and never
 * goes past its sleep or wait) or goes on exactly once (and the cancel says it
 * was not parked any more); either way nothing of its waits is left behind.
 * And a wake racing the event a wait waits for: the run goes on once, with the
 * event or with null, as the wake said.
 */
import { fileURLToPath } from 'node:url';
import { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId, messageBody } from '../../../support/events.js';
import { startPipeline, type Pipeline } from '../../../support/pipeline.js';
import { deliver, waitFor } from '../../../support/service.js';
import type { OpsEntry } from '../../../support/handlers/waits-ops/tally.js';
import { cancelParkedRuns, wakeParkedRun, type ParkedRunDeps, type RunActor } from '../../../../src/queue/waits/ops.js';
import { RunRecords, type ParkedRun } from '../../../../src/queue/waits/runs.js';
import { jobIdFor } from '../../../../src/events/envelope.js';

const HANDLERS = fileURLToPath(new URL('../../../support/handlers/waits-ops', import.meta.url));
const g = globalThis as { __syOps?: Map<string, OpsEntry> };
const tally = (key: string): OpsEntry => g.__syOps?.get(key) ?? { after: 0, got: [] };
const OPERATOR: RunActor = { who: 'race', via: 'test' };
const ROUNDS = 60;
const BATCH = 6;

describe('a cancel or a wake racing the run waking', () => {
  let p: Pipeline;
  let deps: ParkedRunDeps;
  const records = () => new RunRecords(p.redis, p.prefix);
  const send = async (body: string): Promise<string> => {
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    return deliveryId(body);
  };
  const parked = async (keys: readonly string[], handler: string): Promise<ParkedRun[]> => {
    const scopes = keys.map((k) => jobIdFor(k, handler));
    await waitFor(async () => (await Promise.all(scopes.map((s) => records().one(s)))).every((r) => r !== null), 30_000, 50);
    return (await Promise.all(scopes.map((s) => records().one(s)))) as ParkedRun[];
  };
  /** Its job removed (cancelled) or completed (it went on to its end): the run is over. */
  const over = async (run: ParkedRun): Promise<boolean> => {
    const job = await Job.fromId(p.handlerQueues.normal, run.jobId);
    return !job || (await job.isCompleted());
  };
  const leftovers = async (runs: readonly ParkedRun[]): Promise<string[]> => {
    const scopes = new Set(runs.map((r) => r.scope));
    // A run's wait ids are `<scope>:w:<name>`, `<scope>:c:<i>` (its scope, a job id, has no ':').
    const mine = (id: string) => scopes.has(id.split(':', 1)[0] as string);
    const out = (await p.redis.hkeys(`${p.prefix}:wait:state`)).filter(mine).map((id) => `state ${id}`);
    for (const key of await p.redis.keys(`${p.prefix}:wait:on:*`))
      out.push(...(await p.redis.hkeys(key)).filter(mine).map((id) => `on ${id}`));
    out.push(...(await p.redis.zrange(`${p.prefix}:wait:wake`, '0', '-1')).filter(mine).map((id) => `wake ${id}`));
    out.push(...(await p.redis.zrange(`${p.prefix}:wf:due`, '0', '-1')).filter((s) => scopes.has(s)).map((s) => `due ${s}`));
    return out;
  };
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /**
   * `fn` for each run, {@link BATCH} at a time (so an event's way to its run stays about as long as for one), the
   * j-th of a batch given a delay j/(BATCH-1) of the spread: from before the waking reaches the run to after it
   * went on. The spread starts at `spreadMs` and adapts to the machine's load: doubled after a batch in which the
   * waking never came `first`, halved after one in which it always did, so both orders keep happening.
   */
  const raced = async <T>(
    runs: readonly ParkedRun[],
    spreadMs: number,
    fn: (run: ParkedRun, i: number, delay: number) => Promise<T>,
    first: (result: T) => boolean,
  ) => {
    const out: T[] = [];
    let spread = spreadMs;
    for (let b = 0; b < runs.length; b += BATCH) {
      const batch = runs.slice(b, b + BATCH);
      const results = await Promise.all(batch.map((run, j) => fn(run, b + j, (j * spread) / (BATCH - 1))));
      const firsts = results.filter(first).length;
      if (firsts === 0) spread *= 2;
      else if (firsts === results.length) spread /= 2;
      out.push(...results);
    }
    return out;
  };

  /**
   * How long an event takes here from its sending to the run it answers going on (ms, one run): the rounds'
   * cancels and wakes are spread over twice that, so some land before the event reaches the run, some after.
   */
  const answerTime = async (conv: number): Promise<number> => {
    const key = await send(conversationBody('conversation.assigned', conv, null));
    await parked([key], 'ops-waiter');
    const t0 = Date.now();
    await send(messageBody('message.received', conv, 'timing'));
    await waitFor(async () => tally(key).after === 1, 20_000, 5);
    return Date.now() - t0;
  };

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS, env: { WORKER_CONCURRENCY: '16' } });
    deps = { redis: p.redis, prefix: p.prefix, queues: p.handlerQueues, busyWaitMs: 10_000 };
  });
  afterAll(async () => p?.close());

  it(`${ROUNDS} waits cancelled as their event arrives: each cancelled and never answered, or answered once and not cancelled`, async () => {
    const convs = Array.from({ length: ROUNDS }, (_, i) => 9_000 + i);
    const keys = await Promise.all(convs.map((c) => send(conversationBody('conversation.assigned', c, null))));
    const runs = await parked(keys, 'ops-waiter');
    const results = await raced(
      runs,
      2 * (await answerTime(8_999)),
      async (run, i, delay) => {
        const reply = messageBody('message.received', convs[i] as number, `reply ${i}`);
        const [cancel] = await Promise.all([
          (async () => {
            await pause(delay);
            return (await cancelParkedRuns(deps, [run], OPERATOR))[0];
          })(),
          send(reply),
        ]);
        return { run, status: cancel?.status, reply: deliveryId(reply) };
      },
      (r) => r.status === 'finished',
    );
    for (const r of results) await waitFor(() => over(r.run), 20_000, 20);
    const cancelled = results.filter((r) => r.status === 'cancelled');
    const answered = results.filter((r) => r.status === 'finished');
    for (const r of answered) await waitFor(async () => tally(r.run.deliveryKey).after === 1, 20_000, 20);
    console.log(`[ops-race] waits: ${cancelled.length} cancelled first, ${answered.length} answered first`);
    expect(results.filter((r) => r.status !== 'cancelled' && r.status !== 'finished')).toEqual([]);
    expect(cancelled.map((r) => tally(r.run.deliveryKey))).toEqual(cancelled.map(() => ({ after: 0, got: [] })));
    expect(answered.map((r) => tally(r.run.deliveryKey))).toEqual(answered.map((r) => ({ after: 1, got: [r.reply] })));
    expect(await leftovers(runs)).toEqual([]);
    // Both orders happened (otherwise the test raced nothing).
    expect([cancelled.length > 0, answered.length > 0]).toEqual([true, true]);
  }, 120_000);

  it(`${ROUNDS} sleeps cancelled and woken at once: each cancelled and never woken, or woken once and not cancelled`, async () => {
    const keys = await Promise.all(
      Array.from({ length: ROUNDS }, (_, i) => send(conversationBody('conversation.opened', 9_500 + i, null))),
    );
    const runs = await parked(keys, 'ops-sleeper');
    const results = await raced(
      runs,
      60,
      async (run, _i, delay) => {
        const [cancel, wake] = await Promise.all([
          (async () => {
            await pause(delay);
            return (await cancelParkedRuns(deps, [run], OPERATOR))[0];
          })(),
          wakeParkedRun(deps, run, OPERATOR),
        ]);
        return { run, cancel: cancel?.status, wake: wake.status };
      },
      (r) => r.cancel === 'finished',
    );
    for (const r of results) await waitFor(() => over(r.run), 20_000, 20);
    const cancelled = results.filter((r) => r.cancel === 'cancelled');
    const wentOn = results.filter((r) => r.cancel === 'finished');
    for (const r of wentOn) await waitFor(async () => tally(r.run.deliveryKey).after === 1, 20_000, 20);
    console.log(
      `[ops-race] sleeps: ${cancelled.length} cancelled (${cancelled.filter((r) => r.wake === 'woken').length} after the wake's step), ` +
        `${wentOn.length} went on`,
    );
    expect(results.filter((r) => r.cancel !== 'cancelled' && r.cancel !== 'finished')).toEqual([]);
    // A run woken first and cancelled before any worker took it is cancelled all the same: it never went on.
    expect(cancelled.map((r) => tally(r.run.deliveryKey).after)).toEqual(cancelled.map(() => 0));
    expect(wentOn.map((r) => [r.wake, tally(r.run.deliveryKey).after])).toEqual(wentOn.map(() => ['woken', 1]));
    expect(await leftovers(runs)).toEqual([]);
    expect([cancelled.length > 0, wentOn.length > 0]).toEqual([true, true]);
  }, 120_000);

  it(`${ROUNDS} waits woken as their event arrives: each goes on once, with the event or with null, as the wake said`, async () => {
    const convs = Array.from({ length: ROUNDS }, (_, i) => 9_800 + i);
    const keys = await Promise.all(convs.map((c) => send(conversationBody('conversation.assigned', c, null))));
    const runs = await parked(keys, 'ops-waiter');
    const results = await raced(
      runs,
      2 * (await answerTime(9_799)),
      async (run, i, delay) => {
        const reply = messageBody('message.received', convs[i] as number, `reply ${i}`);
        const [wake] = await Promise.all([
          (async () => {
            await pause(delay);
            return wakeParkedRun(deps, run, OPERATOR);
          })(),
          send(reply),
        ]);
        return { run, wake: wake.status, reply: deliveryId(reply) };
      },
      (r) => r.wake !== 'timeout',
    );
    for (const r of results) await waitFor(async () => tally(r.run.deliveryKey).after === 1, 20_000, 20);
    for (const r of results) await waitFor(() => over(r.run), 20_000, 20);
    const nulls = results.filter((r) => r.wake === 'timeout');
    console.log(`[ops-race] wake vs event: ${nulls.length} returned null, ${ROUNDS - nulls.length} got the event`);
    // The event answered first: the wake says `matched` (or, when the run was already running, `running`/`finished`).
    expect(results.map((r) => tally(r.run.deliveryKey))).toEqual(
      results.map((r) => ({ after: 1, got: [r.wake === 'timeout' ? 'null' : r.reply] })),
    );
    expect(await leftovers(runs)).toEqual([]);
    expect([nulls.length > 0, nulls.length < ROUNDS]).toEqual([true, true]);
  }, 120_000);
});
