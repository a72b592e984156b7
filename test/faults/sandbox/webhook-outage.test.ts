/**
 * (d) The sandbox's signed event sender retrying through receiver outages.
 * The sandbox emits `message.received` events (via /_sandbox/inbound) while
 * the receiver process is stopped (SIGTERM, then a SIGKILL) and started again
 * on the same port; the sender retries each event with the same id and bytes.
 * Every event the sandbox emitted must be delivered, processed and written once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { TEST_SECRET } from '../../support/service.js';
import { createRig, sleep, type Rig } from '../../support/faults/rig.js';

const PER_PHASE = 25;

describe('webhook sender retrying through receiver outages', () => {
  let rig: Rig | undefined;
  afterAll(async () => rig?.close());

  it('every emitted event is delivered and processed exactly once across a SIGTERM and a SIGKILL of the receiver', async () => {
    const started = Date.now();
    rig = await createRig({
      prefix: uniquePrefix('whout'),
      redisUrl: testRedisUrl(),
      emitterRetry: { baseMs: 100, maxMs: 800, maxAttempts: 80, timeoutMs: 2_000 },
    });
    const r0 = rig.sandbox;
    let receiver = await rig.startReceiver();
    const port = receiver.port;
    const hook = await fetch(`${rig.api.url}/_sandbox/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, secret: TEST_SECRET }),
    });
    expect(hook.status).toBeLessThan(300);
    const worker = rig.startWorker();
    await worker.waitFor(/worker started/, 20_000);

    let n = 0;
    const emit = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const r = await fetch(`${rig!.api.url}/_sandbox/inbound`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ conversation_id: rig!.conv, body: `fault-d ${n++}` }),
        });
        expect(r.status).toBeLessThan(300);
        await sleep(15);
      }
    };
    const failedAttempts = () => r0.emitter.deliveries().reduce((a, d) => a + Math.max(0, d.attempts - 1), 0);

    await emit(PER_PHASE);
    // Outage 1: graceful stop while events keep coming.
    const stopping = receiver.proc.stop('SIGTERM');
    await emit(PER_PHASE);
    expect(await stopping).toBe(0);
    await emit(PER_PHASE);
    await sleep(1_000);
    receiver = await rig.startReceiver({}, port);
    await emit(PER_PHASE);
    // Outage 2: a crash mid-stream.
    expect(await receiver.proc.stop('SIGKILL')).toBeNull();
    await emit(PER_PHASE);
    await sleep(1_000);
    await rig.startReceiver({}, port); // stopped with the rest of the rig's processes
    await emit(PER_PHASE);

    // The sender goes one event at a time; wait for it to work through the backlog.
    const end = Date.now() + 90_000;
    while (r0.emitter.deliveries().some((d) => d.state === 'pending') && Date.now() < end) await sleep(200);
    const events = r0.emitter.events().filter((e) => e.event === 'message.received');
    const records = new Map(r0.emitter.deliveries().map((d) => [d.id, d]));
    const acked = events.filter((e) => records.get(e.id)?.state === 'delivered').map((e) => e.id);
    const notDelivered = events.filter((e) => records.get(e.id)?.state !== 'delivered').map((e) => `${e.id}:${records.get(e.id)?.state}`);

    const r = await rig.reconcile(
      `webhook sender through receiver SIGTERM + SIGKILL (emitted ${events.length}, failed attempts retried ${failedAttempts()})`,
      events.map((e) => e.id),
      acked,
      { startedAt: started, timeoutMs: 60_000 },
    );
    expect(events.length).toBe(PER_PHASE * 6);
    expect(failedAttempts()).toBeGreaterThan(0);
    expect(notDelivered).toEqual([]);
    expect({ lost: r.lostIds, repeated: r.repeatedIds, unexpected: r.unexpected, failedJobs: r.failedJobs }).toEqual({
      lost: [],
      repeated: [],
      unexpected: 0,
      failedJobs: 0,
    });
    expect(r).toMatchObject({ sent: events.length, acked: events.length, processed: events.length, written: events.length });
  }, 180_000);
});
