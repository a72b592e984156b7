import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { messageBody } from '../../support/events.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, startTestService, waitFor } from '../../support/service.js';

const FLOW_HANDLERS = fileURLToPath(new URL('../../support/handlers/flow', import.meta.url));
const CONVERSATIONS = 30;
const EVENTS = 8;
const FAIL_EVERY = 3; // seqs 3 and 6 of every conversation fail their first attempt
const SLOW_SEQ = 4; // the first workers linger on seq 4, so the SIGKILL lands mid-run

interface Run {
  h: string;
  at: 'start' | 'done';
  conv: number;
  seq: number;
  attempt: number;
  pid: number;
}

describe('ordered runs through retries and a SIGKILLed worker (3 worker processes)', () => {
  const prefix = uniquePrefix('orderchaos');
  const logKey = `${prefix}:flow-log`;
  let receiver: Awaited<ReturnType<typeof startTestService>> | undefined;
  let redis: Redis;
  let events: Queue;
  let handlers: Queue;
  const workers: CliProcess[] = [];

  const startWorker = (env: Record<string, string> = {}) => {
    const w = runCli(['work'], {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
      HANDLERS_DIR: FLOW_HANDLERS,
      JOB_LOCK_DURATION: '2s',
      WORKER_CONCURRENCY: '5',
      WORKSPACE_API_URL: 'http://127.0.0.1:9/api/v1',
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
      LOG_LEVEL: 'info',
      FLOW_REDIS_URL: testRedisUrl(),
      FLOW_LOG_KEY: logKey,
      FLOW_FAIL_EVERY: String(FAIL_EVERY),
      ...env,
    });
    workers.push(w);
    return w;
  };
  const runs = async (): Promise<Run[]> =>
    (await redis.lrange(logKey, 0, -1)).map((r) => JSON.parse(r) as Run).filter((r) => r.h === 'ordered');

  beforeAll(async () => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    handlers = new Queue(HANDLERS_QUEUE, { connection: redis, prefix });
    receiver = await startTestService({ REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix });
  });
  afterAll(async () => {
    // Every child, also when the test failed half-way.
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await receiver?.close();
    await events?.close();
    await handlers?.close();
    await redis?.del(logKey);
    redis?.disconnect();
  });

  it('completes every event exactly once per conversation, in creation order, one run at a time', async () => {
    const slow = { FLOW_SLOW_SEQ: String(SLOW_SEQ), FLOW_SLOW_MS: '1500' };
    const first = [startWorker(slow), startWorker(slow), startWorker(slow)];
    await Promise.all(first.map((w) => w.waitFor(/worker started/, 30_000)));
    const url = receiver!.url;

    // Seq s of every conversation in round s, created 1 ms apart (all conversations active at once).
    // Each round is fanned out (in every order line) before the next is sent: events of one
    // conversation fanned out concurrently can enter its line in either order (see the bench/flow
    // report), which is not what this test is about.
    const base = Date.now() - 60_000;
    let victim: CliProcess | undefined;
    let killedPid = 0;
    for (let seq = 1; seq <= EVENTS; seq++) {
      const answers = await Promise.all(
        Array.from({ length: CONVERSATIONS }, (_, i) =>
          deliver(url, messageBody('message.received', i + 1, String(seq), base + seq * 1000 + i)).then((r) => r.status),
        ),
      );
      expect(answers.every((s) => s === 202)).toBe(true);
      await waitFor(
        async () => (((await events.getJobCounts('completed')).completed ?? 0) >= seq * CONVERSATIONS ? true : undefined),
        30_000,
        50,
      );

      if (seq === SLOW_SEQ + 1) {
        // A first worker is lingering in seq 4 of some conversation: SIGKILL it there, start a replacement.
        const inFlight = await waitFor(
          async () => {
            const all = await runs();
            const pids = new Set(first.map((w) => w.child.pid));
            return all.find(
              (r) =>
                r.at === 'start' &&
                r.seq === SLOW_SEQ &&
                pids.has(r.pid) &&
                !all.some((d) => d.at === 'done' && d.conv === r.conv && d.seq === SLOW_SEQ && d.pid === r.pid),
            );
          },
          30_000,
          20,
        );
        victim = first.find((w) => w.child.pid === inFlight.pid);
        killedPid = inFlight.pid;
        expect(await victim!.stop('SIGKILL')).toBeNull();
        await startWorker().waitFor(/worker started/, 30_000);
      }
    }

    const total = CONVERSATIONS * EVENTS;
    await waitFor(
      async () => {
        const c = await handlers.getJobCounts('completed', 'failed');
        return (c.completed ?? 0) + (c.failed ?? 0) >= total ? true : undefined;
      },
      90_000,
      100,
    );
    const counts = await handlers.getJobCounts('completed', 'failed', 'wait', 'active', 'delayed');
    expect(counts).toMatchObject({ completed: total, failed: 0, wait: 0, active: 0, delayed: 0 });
    expect(await redis.zcard(`${prefix}:order-backlog:ordered`)).toBe(0);

    const all = await runs();
    // The kill really interrupted a run: a start of the killed worker without its done.
    expect(
      all.some(
        (r) =>
          r.pid === killedPid &&
          r.at === 'start' &&
          !all.some((d) => d.at === 'done' && d.conv === r.conv && d.seq === r.seq && d.pid === killedPid),
      ),
    ).toBe(true);

    for (let conv = 1; conv <= CONVERSATIONS; conv++) {
      const mine = all.filter((r) => r.conv === conv);
      const done: Run[] = [];
      let active: Run | undefined; // started, not done: a failing first attempt or the killed worker's run
      for (const r of mine) {
        if (r.at === 'start') {
          // No start of seq n + 1 before the done of seq n ...
          if (r.seq > 1)
            expect(
              done.some((d) => d.seq === r.seq - 1),
              `conv ${conv}: seq ${r.seq} started before seq ${r.seq - 1} was done`,
            ).toBe(true);
          // ... and no start while another run of the conversation may still be going: the run before
          // ended (done), failed its first attempt on purpose, or died with the killed worker.
          if (active) {
            const ended = active.seq === r.seq && ((active.seq % FAIL_EVERY === 0 && active.attempt === 1) || active.pid === killedPid);
            expect(ended, `conv ${conv}: seq ${r.seq} (pid ${r.pid}) started while seq ${active.seq} (pid ${active.pid}) ran`).toBe(true);
          }
          active = r;
        } else {
          expect(active, `conv ${conv}: done of seq ${r.seq} without its start`).toMatchObject({ seq: r.seq, pid: r.pid });
          active = undefined;
          const twice = done.find((d) => d.seq === r.seq);
          // A second done of one seq is only possible when the killed worker wrote the first one and
          // died before completing its job (at-least-once); it is still one completed run.
          if (twice) expect(twice.pid, `conv ${conv}: seq ${r.seq} done twice`).toBe(killedPid);
          else done.push(r);
        }
      }
      // Every event ran to completion, in creation order.
      expect(
        done.map((d) => d.seq),
        `conv ${conv}`,
      ).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1));
      // The failing seqs ran again after their failed first attempt.
      for (let seq = FAIL_EVERY; seq <= EVENTS; seq += FAIL_EVERY) {
        expect(mine.filter((r) => r.seq === seq && r.at === 'start').length, `conv ${conv} seq ${seq} attempts`).toBeGreaterThanOrEqual(2);
      }
    }
  }, 180_000);
});
