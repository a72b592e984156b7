import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTrace } from '../../../src/history/read.js';
import type { AttemptEntry } from '../../../src/history/record.js';
import { HistoryWriter, type FanOutFacts, type Receipt } from '../../../src/history/writer.js';
import { memoryLogger } from '../../support/service.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

/*
 * The writer merges the writes of one delivery that fall in one batch (its fan-out and its handler's
 * attempt, the common case) into one script call. The merged call must leave exactly what the separate
 * calls leave, in either order: the attempt's outcome is never overwritten by the fan-out's placement
 * (HSETNX), every entry is kept (`trace` shows them by time), the delivery is indexed at its receipt.
 */

const RECEIVED = new Date(Date.now() - 1_000).toISOString();
const receipt: Receipt = { receivedAt: RECEIVED, queuedAt: Date.parse(RECEIVED) + 5, secretIndex: 0, bytes: 321, source: 'webhook' };
const facts: FanOutFacts = {
  event: 'message.received',
  conversation: '812',
  contact: '7',
  handlers: [{ id: 'notes', placement: 'queued', priority: 'normal' }],
};
const attempt = (at: number): AttemptEntry => ({
  kind: 'attempt',
  at,
  startedAt: at - 40,
  handler: 'notes',
  attempt: 1,
  outcome: 'completed',
  steps: [],
  calls: [],
});

describe("history writer: one delivery's writes in one batch (real redis-server)", () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  });
  afterAll(() => {
    redis.disconnect();
  });

  /** A writer whose pipelines count the history scripts they carry. */
  function countingWriter(prefix: string): { writer: HistoryWriter; scripts: () => number; prefix: string } {
    let n = 0;
    const client = redis.duplicate();
    const pipeline = client.pipeline.bind(client);
    client.pipeline = (...args: Parameters<typeof client.pipeline>) => {
      const p = pipeline(...args) as ReturnType<typeof client.pipeline> & { historyWrite?: (...a: unknown[]) => unknown };
      const write = p.historyWrite;
      if (write)
        p.historyWrite = (...a: unknown[]) => {
          n++;
          return write.apply(p, a);
        };
      return p;
    };
    return { writer: new HistoryWriter(client, { prefix, ttlMs: 3_600_000 }, memoryLogger().log), scripts: () => n, prefix };
  }

  async function state(prefix: string, key: string) {
    const t = await readTrace(redis, prefix, key);
    const indexed = await redis.zscore(`${prefix}:hist:index`, key);
    return { handlers: t?.handlers, event: t?.event, conversation: t?.conversation, kinds: t?.entries.map((e) => e.kind), indexed };
  }
  const settle = () => new Promise((r) => setTimeout(r, 100));

  it('fan-out then attempt in one batch: one script call, the same result as two batches', async () => {
    const merged = countingWriter(uniquePrefix('hist-merge'));
    const apart = countingWriter(uniquePrefix('hist-apart'));
    const now = Date.parse(RECEIVED) + 50;
    merged.writer.fannedOut('evt_m', receipt, facts, now);
    merged.writer.attempt('evt_m', attempt(now + 60), 'd/evt_m/notes');
    merged.writer.flush();
    apart.writer.fannedOut('evt_m', receipt, facts, now);
    apart.writer.flush();
    apart.writer.attempt('evt_m', attempt(now + 60), 'd/evt_m/notes');
    apart.writer.flush();
    await settle();
    expect(merged.scripts()).toBe(1);
    expect(apart.scripts()).toBe(2);
    const a = await state(merged.prefix, 'evt_m');
    const b = await state(apart.prefix, 'evt_m');
    expect(a).toEqual(b);
    expect(a).toMatchObject({
      handlers: { notes: 'completed' },
      event: 'message.received',
      conversation: '812',
      kinds: ['fanout', 'attempt'],
      indexed: String(Date.parse(RECEIVED)),
    });
  });

  it('attempt before its fan-out in one batch (another process was quicker): the outcome stays, not the placement', async () => {
    const prefix = uniquePrefix('hist-first');
    const { writer, scripts } = countingWriter(prefix);
    const now = Date.parse(RECEIVED) + 50;
    writer.attempt('evt_f', attempt(now + 60), 'd/evt_f/notes');
    writer.fannedOut('evt_f', receipt, facts, now);
    writer.flush();
    await settle();
    expect(scripts()).toBe(1);
    expect(await state(prefix, 'evt_f')).toMatchObject({
      handlers: { notes: 'completed' },
      kinds: ['fanout', 'attempt'],
      indexed: String(Date.parse(RECEIVED)),
    });
  });
});
