/**
 * (c) The workspace API misbehaving on the write path: half of the note
 * writes answered 500, then a run of forced 429s. Every job must complete,
 * nothing may be dead-lettered, and each note must be written exactly once
 * (a 500 is not remembered by the idempotency layer, so the retry is a fresh
 * attempt; a replay of a 2xx is not a second write).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryId, messageBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { createRig, sendAll, type Rig, type Send } from '../../support/faults/rig.js';

const DELIVERIES = 200;

async function fault(rig: Rig, rule: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${rig.api.url}/_sandbox/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  if (r.status >= 300) throw new Error(`fault rule refused: ${r.status} ${await r.text()}`);
}

describe('API storms on the write path', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await createRig({ prefix: uniquePrefix('storm'), redisUrl: testRedisUrl() });
  });
  afterAll(async () => rig?.close());

  const cases = [
    { name: '500 storm (error_rate 0.5)', rule: { path: '/conversations/*/notes', method: 'POST', error_rate: 0.5 }, status: 500 },
    {
      name: '429 storm (force_429, count 300)',
      rule: { path: '/conversations/*/notes', method: 'POST', force_429: true, count: 300 },
      status: 429,
    },
  ];

  for (const c of cases) {
    it(`${c.name}: every job completes, no write is lost or repeated`, async () => {
      const started = Date.now();
      // A fresh rig per storm would restart the sandbox; instead a fresh prefix-scoped set of ids and a clean fault list.
      await fetch(`${rig.api.url}/_sandbox/faults`, { method: 'DELETE' });
      rig.collector.reset();
      await fault(rig, c.rule);
      const receiver = await rig.startReceiver();
      const worker = rig.startWorker({ WORKER_CONCURRENCY: '16' });
      await worker.waitFor(/worker started/, 20_000);
      const sends: Send[] = Array.from({ length: DELIVERIES }, () => {
        const body = messageBody('message.received', rig.conv);
        return { id: deliveryId(body), body, to: 0 };
      });
      const result = await sendAll(sends, () => [receiver.url], { concurrency: 16 });
      const r = await rig.reconcile(
        c.name,
        sends.map((s) => s.id),
        result.acked,
        { startedAt: started, timeoutMs: 150_000, settleMs: 1_500 },
      );
      const felt = rig.collector.entries().filter((e) => e.status === c.status).length;
      console.log(`[faults] ${c.name}: ${c.status} answers seen by the worker=${felt}`);
      expect(felt).toBeGreaterThan(c.status === 500 ? DELIVERIES / 4 : 100);
      expect({ lost: r.lostIds, repeated: r.repeatedIds, unexpected: r.unexpected, failedJobs: r.failedJobs }).toEqual({
        lost: [],
        repeated: [],
        unexpected: 0,
        failedJobs: 0,
      });
      expect(r).toMatchObject({ sent: DELIVERIES, acked: DELIVERIES, processed: DELIVERIES, written: DELIVERIES });
      await Promise.all([worker.stop('SIGTERM'), receiver.proc.stop('SIGTERM')]);
    }, 180_000);
  }
});
