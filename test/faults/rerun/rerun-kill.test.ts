/**
 * A rerun batch with its CLI and a worker SIGKILLed in the middle. 300 deliveries are handled once (each
 * writes its note), then re-run by `switchyard rerun --handler note-on-message --yes` (the built CLI) while
 * two workers (`switchyard work`) feed and run the batch; the CLI following it is SIGKILLed, and so is the
 * worker feeding the batch once a third of it is done (its running re-runs stall and run again elsewhere;
 * its feeder lease lapses and the other worker feeds on). Counted at the sandbox over HTTP: every delivery's note is
 * written exactly once more (fresh 201s, not idempotent replays), and the batch ends with all done.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { rerunStatus, type RerunStatus } from '../../../src/rerun/batch.js';
import { runCli } from '../../support/cli.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { createRig, HANDLER_ID, sendAll, sleep, TEST_HANDLERS, type Rig, type Send } from '../../support/faults/rig.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const DELIVERIES = 300;

describe('a rerun batch with its CLI and a worker SIGKILLed mid-batch', () => {
  let rig: Rig | undefined;
  let redis: Redis | undefined;
  afterAll(async () => {
    redis?.disconnect();
    await rig?.close();
  });

  it(`re-runs each of ${DELIVERIES} deliveries exactly once`, async () => {
    const started = Date.now();
    const prefix = uniquePrefix('rrkill');
    rig = await createRig({ prefix, redisUrl: testRedisUrl() });
    redis = new Redis(testRedisUrl());
    const receiver = await rig.startReceiver();
    // The re-runs' share: WORKSPACE_API_BURST 400, RERUN_SHARE 0.5 = 200 per 10 s (the sandbox allows more).
    const env = { JOB_LOCK_DURATION: '1s', NOTE_SLEEP_MS: '300', WORKER_CONCURRENCY: '8', WORKSPACE_API_BURST: '400', RERUN_SHARE: '0.5' };
    const a = rig.startWorker(env);
    const b = rig.startWorker(env);
    await Promise.all([a.waitFor(/worker started/, 20_000), b.waitFor(/worker started/, 20_000)]);
    const sends: Send[] = Array.from({ length: DELIVERIES }, (_, i) => {
      const body = messageBody('message.received', rig!.conv, `order ${i}`);
      return { id: deliveryId(body), body, to: 0 };
    });
    const sent = await sendAll(sends, () => [receiver.url], { concurrency: 16 });
    expect(sent.acked.size).toBe(DELIVERIES);
    const first = await rig.reconcile(
      'before the rerun',
      sends.map((s) => s.id),
      sent.acked,
      { startedAt: started, settleMs: 500 },
    );
    expect(first).toMatchObject({ written: DELIVERIES, lost: 0, repeated: 0 });
    rig.collector.reset();

    const cli = runCli(['rerun', '--handler', HANDLER_ID, '--yes'], {
      REDIS_URL: rig.redisUrl,
      QUEUE_PREFIX: prefix,
      HANDLERS_DIR: TEST_HANDLERS,
      WORKSPACE_API_BURST: '400',
      RERUN_SHARE: '0.5',
    });
    const batch = (await cli.waitFor(/started (rr-[0-9a-z]+-[0-9a-f]{4})/, 60_000))[1] as string;
    expect(cli.output()).toContain(`${DELIVERIES} deliveries to run again`);
    const status = () => rerunStatus({ redis: redis!, prefix }, batch);
    await waitUntil(async () => (await status()).done >= 10, 60_000);
    expect(await cli.stop('SIGKILL')).toBeNull();
    await waitUntil(async () => (await status()).done >= DELIVERIES / 3, 60_000);
    const atKill = await status();
    // Kill the worker feeding the batch (its lease names its pid): the other must take the feed over.
    const feeder = Number((await redis.get(`${prefix}:rerun:b:${batch}:lease`))?.split(':')[0]);
    const victim = [a, b].find((w) => w.child.pid === feeder);
    expect(victim).toBeDefined();
    expect(await victim!.stop('SIGKILL')).toBeNull();
    const end = await waitUntil(async () => {
      const s = await status();
      return s.state === 'done' ? s : null;
    }, 150_000);
    await sleep(2_500); // a stalled re-run run again late would show up here
    rig.collector.harvest();
    const writes = rig.collector.writesById();
    const missing = sends.filter((s) => (writes.get(s.id) ?? 0) === 0).map((s) => s.id);
    const twice = [...writes].filter(([, n]) => n > 1).map(([id]) => id);
    const replays = rig.collector.entries().filter((e) => e.replay).length;
    console.log(
      `[faults] rerun SIGKILL: batch ${batch} done=${end.done} failed=${end.failed} of ${end.total}; killed the CLI at ~10 done and ` +
        `the feeding worker at ${atKill.done} done (${atKill.open} open); fresh writes=${[...writes.values()].reduce((x, y) => x + y, 0)} ` +
        `replays=${replays} missing=${missing.length} twice=${twice.length} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    expect({ missing, twice, unexpected: [...writes.keys()].filter((id) => !sent.acked.has(id)) }).toEqual({
      missing: [],
      twice: [],
      unexpected: [],
    });
    expect(end).toMatchObject({
      total: DELIVERIES,
      fed: DELIVERIES,
      done: DELIVERIES,
      failed: 0,
      cancelled: 0,
      open: 0,
    } satisfies Partial<RerunStatus>);
  }, 240_000);
});

async function waitUntil<T>(check: () => Promise<T>, timeoutMs: number): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(100);
  }
}
