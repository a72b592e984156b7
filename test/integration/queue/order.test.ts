import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { HandlerJobData, OrderRef } from '../../../src/queue/jobs.js';
import { OrderGate, orderMember, type QueuedJob } from '../../../src/queue/order.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { encodeInboxItem } from '../../../src/queue/inbox-item.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
afterAll(() => redis.disconnect());

/** Run `n` of key `conversation:1`, created at `at`, received at `received`. */
function run(n: number, at: number, received = 1_000 + n): QueuedJob & { data: HandlerJobData & { order: OrderRef } } {
  const jobId = `j${n}`;
  const data = {
    key: `evt_${n}`,
    handlerId: 'h',
    receivedAt: new Date(received).toISOString(),
    event: { id: `evt_${n}`, name: 'message.received' as const, createdAt: new Date(at).toISOString(), data: {} },
    order: { key: 'conversation:1', member: orderMember(received, jobId), at },
  };
  return { priority: 'normal', name: 'h', data, opts: { jobId } };
}

describe('order lines (Redis)', () => {
  it('an earlier event fanned out after a later one became the head goes first: the later run parks, then is promoted', async () => {
    const gate = new OrderGate(redis, uniquePrefix('order'), { doneTtlMs: 60_000 });
    const added: string[] = [];
    const add = async (j: QueuedJob, parked = false) => {
      added.push(`${parked ? 'promote' : 'add'} ${j.opts.jobId}`);
    };
    const [first, second] = [run(1, 100), run(2, 200)];
    // 2 reaches an idle line first and becomes its head; 1 (created earlier) waits behind it.
    expect(await gate.enqueue(second, second.data.order)).toBe('add');
    expect(await gate.enqueue(first, first.data.order)).toBe('wait');
    // 2 starts, sees the earlier event, hands it the head and parks.
    expect(await gate.claim(second.data, 'j2', add)).toEqual({ kind: 'park' });
    expect(added).toEqual(['add j1']);
    expect(await gate.claim(first.data, 'j1', add)).toEqual({ kind: 'run', lastAppliedAt: null });
    await gate.release(first.data, 'j1', 'completed', add);
    expect(added).toEqual(['add j1', 'promote j2']);
    expect(await gate.claim(second.data, 'j2', add)).toEqual({ kind: 'run', lastAppliedAt: 100 });
    await gate.release(second.data, 'j2', 'completed', add);
    expect(added).toEqual(['add j1', 'promote j2']);
    expect(await gate.backlog('h')).toEqual({ keys: 0, pending: 0, longest: 0 });
  });

  it('a run that wakes up parked while another holds the key parks again; a run no longer in its line runs', async () => {
    const gate = new OrderGate(redis, uniquePrefix('order'), { doneTtlMs: 60_000 });
    const add = async () => undefined;
    const [a, b] = [run(1, 100), run(2, 200)];
    expect(await gate.enqueue(a, a.data.order)).toBe('add');
    expect(await gate.enqueue(b, b.data.order)).toBe('wait');
    expect(await gate.claim(a.data, 'j1', add)).toEqual({ kind: 'run', lastAppliedAt: null });
    expect(await gate.claim(b.data, 'j2', add)).toEqual({ kind: 'park' });
    // Dead-lettered and released, later retried from the dead-letter queue: it is out of the line and runs.
    await gate.release(a.data, 'j1', 'released', add);
    expect(await gate.claim(a.data, 'j1', add)).toEqual({ kind: 'run', lastAppliedAt: null });
  });

  it('a run waits while a delivery received before its own is still to be fanned out, at most the hold time', async () => {
    const prefix = uniquePrefix('order');
    const gate = new OrderGate(redis, prefix, { doneTtlMs: 60_000, holdMs: 60_000 });
    const pending = ingestKeys(prefix).pendingFanOut;
    const add = async () => undefined;
    const now = Date.now();
    const r = run(1, now - 50, now);
    expect(await gate.enqueue(r, r.data.order)).toBe('add');
    // A delivery received 200 ms earlier is queued but not fanned out yet (its worker died mid-fan-out, say).
    await redis.zadd(pending, now - 200, 'evt_earlier');
    expect(await gate.claim(r.data, 'j1', add)).toEqual({ kind: 'hold', ms: 25 });
    await redis.zrem(pending, 'evt_earlier');
    expect(await gate.claim(r.data, 'j1', add)).toEqual({ kind: 'run', lastAppliedAt: null });
    // Deliveries received after it, or more than the hold time before it, do not hold it.
    await redis.zadd(pending, now + 5, 'evt_later', now - 120_000, 'evt_lost');
    expect(await gate.claim(r.data, 'j1', add)).toEqual({ kind: 'run', lastAppliedAt: null });
  });

  it('a run already older than the hold time does not wait', async () => {
    const prefix = uniquePrefix('order');
    const gate = new OrderGate(redis, prefix, { doneTtlMs: 60_000, holdMs: 1_000 });
    const now = Date.now();
    const r = run(1, now - 5_000, now - 2_000);
    expect(await gate.enqueue(r, r.data.order)).toBe('add');
    await redis.zadd(ingestKeys(prefix).pendingFanOut, now - 2_500, 'evt_earlier');
    expect(await gate.claim(r.data, 'j1', async () => undefined)).toEqual({ kind: 'run', lastAppliedAt: null });
  });

  it("a run waits while a stopped pump still holds a delivery received before its own; a live pump's batch does not hold it", async () => {
    const prefix = uniquePrefix('order');
    const gate = new OrderGate(redis, prefix, { doneTtlMs: 60_000, holdMs: 60_000 });
    const keys = ingestKeys(prefix);
    const now = Date.now();
    const r = run(1, now - 50, now);
    expect(await gate.enqueue(r, r.data.order)).toBe('add');
    const item = encodeInboxItem({
      key: 'evt_stranded',
      name: 'message.received',
      receivedAt: new Date(now - 300).toISOString(),
      secretIndex: 0,
      headers: {},
      body: '{}',
    });
    await redis.sadd(keys.pumps, 'p-live', 'p-dead');
    await redis.set(keys.heartbeat('p-live'), '1');
    await redis.rpush(keys.inflight('p-live'), item);
    expect(await gate.claim(r.data, 'j1', async () => undefined)).toEqual({ kind: 'run', lastAppliedAt: null });
    await redis.rpush(keys.inflight('p-dead'), item);
    await new Promise((res) => setTimeout(res, 250)); // past the per-process cache of the check
    expect(await gate.claim(r.data, 'j1', async () => undefined)).toEqual({ kind: 'hold', ms: 100 });
  });
});
