/**
 * (f) Processes started while Redis is down. A receiver with SPOOL_DIR listens
 * at once and spools; it is SIGKILLed during the outage (a crash, or a pod
 * replaced), restarted, and spools again, while a worker started during the
 * outage waits for Redis. When Redis comes up the spool drains, the worker
 * starts, and every acknowledged delivery is written exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { uniquePrefix } from '../../support/redis.js';
import { createRig, sendAll, type Rig, type Send } from '../../support/faults/rig.js';

const PER_PHASE = 60;

describe('receiver and worker started while Redis is down', () => {
  let rig: Rig | undefined;
  let redis: ManagedRedis | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await rig?.close();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    rig = undefined;
    redis = undefined;
    dir = undefined;
  });

  it('spools before and after a receiver SIGKILL during the outage; once Redis is up everything drains, nothing lost or doubled', async () => {
    const started = Date.now();
    dir = mkdtempSync(join(tmpdir(), 'sy-fault-noredis-'));
    const redisPort = await freePort();
    const redisUrl = `redis://127.0.0.1:${redisPort}`;
    rig = await createRig({ prefix: uniquePrefix('noredis'), redisUrl });
    const spoolEnv = { SPOOL_DIR: join(dir, 'spool') };

    // Nothing listens on the Redis port: both processes must come up anyway.
    const first = await rig.startReceiver(spoolEnv);
    const worker = rig.startWorker();
    await worker.waitFor(/"redis":"redis:\/\/127\.0\.0\.1:\d+".*is unreachable/, 10_000);

    const batch = (n: number): Send[] =>
      Array.from({ length: n }, () => {
        const body = messageBody('message.received', rig!.conv);
        return { id: deliveryId(body), body, to: 0 };
      });
    const phase1 = batch(PER_PHASE);
    const r1 = await sendAll(phase1, () => [first.url], { concurrency: 8, deadlineMs: 30_000 });
    expect(r1.statuses).toEqual({ 202: PER_PHASE });

    // A crash of the receiver while Redis is still down: its spool is on disk.
    expect(await first.proc.stop('SIGKILL')).toBeNull();
    const second = await rig.startReceiver(spoolEnv, first.port);
    const phase2 = batch(PER_PHASE);
    // Senders repeat some deliveries (the workspace retries): they must not be doubled.
    const repeats = phase1.slice(0, 10);
    const r2 = await sendAll([...phase2, ...repeats], () => [second.url], { concurrency: 8, deadlineMs: 30_000 });
    expect(r2.statuses).toEqual({ 202: PER_PHASE + repeats.length });
    expect(second.proc.output()).toMatch(/"outcome":"spooled"/);
    expect(worker.output()).not.toMatch(/worker started/);

    redis = await startManagedRedis({ dir: join(dir, 'redis'), port: redisPort, appendfsync: 'always' });
    await worker.waitFor(/worker started/, 30_000);
    const sent = [...phase1, ...phase2].map((s) => s.id);
    const r = await rig.reconcile(
      'receiver SIGKILLed and restarted while Redis was down (spool), worker started during the outage',
      sent,
      [...r1.acked, ...r2.acked],
      { startedAt: started, timeoutMs: 60_000 },
    );
    expect(second.proc.output()).toMatch(/spooled deliveries moved into Redis/);
    expect({ lost: r.lostIds, repeated: r.repeatedIds, unexpected: r.unexpected, failedJobs: r.failedJobs }).toEqual({
      lost: [],
      repeated: [],
      unexpected: 0,
      failedJobs: 0,
    });
    expect(r).toMatchObject({ sent: 2 * PER_PHASE, acked: 2 * PER_PHASE, processed: 2 * PER_PHASE, written: 2 * PER_PHASE });
  }, 180_000);
});
