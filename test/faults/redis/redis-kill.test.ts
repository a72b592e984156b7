/**
 * (a) Redis SIGKILLed (a crash: no SHUTDOWN, no final AOF rewrite) and
 * restarted on the same port and data directory while deliveries stream in.
 * The server runs with `appendfsync always`: every acknowledged write is on
 * disk before Redis answers, which is what makes "no acknowledged delivery is
 * lost" a fair claim across a crash of Redis itself (with `everysec`, up to a
 * second of writes may go, see README "Durability").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { uniquePrefix } from '../../support/redis.js';
import { createRig, killRedis, sendAll, sleep, type Rig, type Send } from '../../support/faults/rig.js';

const DELIVERIES = 800;
const KILLS_AT = [250, 550];
const DOWN_MS = 1_500;

describe('Redis SIGKILLed and restarted under load (appendfsync always)', () => {
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

  for (const spool of [false, true]) {
    it(`${spool ? 'with SPOOL_DIR: spooled 202s drained later' : 'without the spool: senders retry on 503'}; nothing acknowledged is lost or repeated`, async () => {
      const started = Date.now();
      dir = mkdtempSync(join(tmpdir(), 'sy-fault-redis-'));
      redis = await startManagedRedis({ dir: join(dir, 'redis'), appendfsync: 'always' });
      const port = redis.port;
      rig = await createRig({ prefix: uniquePrefix(spool ? 'killspool' : 'kill'), redisUrl: redis.url });
      const receiver = await rig.startReceiver(spool ? { SPOOL_DIR: join(dir, 'spool') } : {});
      const worker = rig.startWorker({ JOB_LOCK_DURATION: '2s' });
      await worker.waitFor(/worker started/, 20_000);

      const sends: Send[] = Array.from({ length: DELIVERIES }, () => {
        const body = messageBody('message.received', rig!.conv);
        return { id: deliveryId(body), body, to: 0 };
      });
      let progress = 0;
      const chaos = (async () => {
        for (const at of KILLS_AT) {
          while (progress < at) await sleep(10);
          await killRedis(redis);
          await sleep(DOWN_MS);
          redis = await startManagedRedis({ dir: join(dir, 'redis'), port, appendfsync: 'always' });
        }
      })();
      const result = await sendAll(sends, () => [receiver.url], {
        concurrency: 16,
        deadlineMs: 90_000,
        onProgress: (n) => {
          progress = n;
        },
      });
      await chaos;

      const spooled = (receiver.proc.output().match(/"outcome":"spooled"/g) ?? []).length;
      const r = await rig.reconcile(
        `redis SIGKILL x${KILLS_AT.length}, appendfsync always, ${spool ? `with spool (${spooled} spooled)` : 'no spool'} (statuses ${JSON.stringify(result.statuses)}, sender retries ${result.retries})`,
        sends.map((s) => s.id),
        result.acked,
        { startedAt: started, timeoutMs: 90_000 },
      );

      expect(result.gaveUp).toEqual([]);
      if (spool) {
        // The spool took every delivery Redis could not: no 503 at all, and some were spooled.
        expect(result.statuses['503'] ?? 0).toBe(0);
        expect(spooled).toBeGreaterThan(0);
      } else {
        expect(result.statuses['503'] ?? 0).toBeGreaterThan(0);
      }
      expect(worker.child.exitCode).toBeNull();
      expect(receiver.proc.child.exitCode).toBeNull();
      expect({ lost: r.lostIds, repeated: r.repeatedIds, unexpected: r.unexpected, failedJobs: r.failedJobs }).toEqual({
        lost: [],
        repeated: [],
        unexpected: 0,
        failedJobs: 0,
      });
      expect(r).toMatchObject({ sent: DELIVERIES, acked: DELIVERIES, processed: DELIVERIES, written: DELIVERIES });
    }, 180_000);
  }
});
