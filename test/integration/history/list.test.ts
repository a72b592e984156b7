import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWheres } from '../../../src/events/where.js';
import { historyKeys } from '../../../src/history/keys.js';
import { findDeliveries, listDeliveries, type DeliveryFilter } from '../../../src/history/list.js';
import type { AttemptOutcome } from '../../../src/history/record.js';
import { HistoryWriter, type Receipt } from '../../../src/history/writer.js';
import { eventBody, messageData, newEventId } from '../../support/events.js';
import { memoryLogger } from '../../support/service.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { waitFor } from '../../support/wait.js';

/*
 * `deliveries --where` on the history (real redis-server): the kept bodies matched page by page, newest first,
 * beside the summary filters; deliveries without a kept body counted, never silently dropped; every index entry
 * read once across pages (ties of one ms included), and no 20 000 cap on a content query.
 */

const HOUR = 3_600_000;
const T0 = Date.now() - 5 * HOUR;

describe('listing deliveries by content (real redis-server)', () => {
  let redis: Redis;
  const prefix = uniquePrefix('hist-where');
  let keep: HistoryWriter;
  let noKeep: HistoryWriter;
  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    keep = new HistoryWriter(redis, { prefix, ttlMs: 24 * HOUR, keepBodiesMs: 24 * HOUR }, memoryLogger().log);
    noKeep = new HistoryWriter(redis, { prefix, ttlMs: 24 * HOUR, keepBodiesMs: 0 }, memoryLogger().log);
  });
  afterAll(async () => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
    redis.disconnect();
  });

  const receipt = (at: number, bytes = 100): Receipt => ({
    receivedAt: new Date(at).toISOString(),
    queuedAt: at + 2,
    secretIndex: 0,
    bytes,
    source: 'webhook',
  });
  const handlers = [{ id: 'notes', placement: 'queued', priority: 'normal' }];

  /** Writes one delivery's fan-out (its body kept by `writer`) and, given, its handler's outcome; returns its key. */
  function delivered(
    at: number,
    event: string,
    data: object,
    o: { writer?: HistoryWriter; conversation?: string; outcome?: AttemptOutcome; key?: string } = {},
  ): string {
    const key = o.key ?? newEventId();
    const raw = Buffer.from(eventBody(event, data, { id: key, createdMs: at }));
    (o.writer ?? keep).fannedOut(
      key,
      receipt(at, raw.byteLength),
      { event, conversation: o.conversation ?? null, contact: null, handlers, raw },
      at + 5,
    );
    if (o.outcome)
      (o.writer ?? keep).attempt(
        key,
        { kind: 'attempt', at: at + 9, startedAt: at + 6, handler: 'notes', attempt: 1, outcome: o.outcome, steps: [], calls: [] },
        `d/${key}/notes`,
      );
    return key;
  }
  const flushed = async (last: string) => {
    keep.flush();
    noKeep.flush();
    await waitFor(async () => (await redis.exists(historyKeys(prefix).summary(last))) === 1);
  };
  const list = (where: string[], f: Omit<DeliveryFilter, 'where'> = {}) =>
    listDeliveries(redis, prefix, { ...f, where: parseWheres(where, f.event as Parameters<typeof parseWheres>[1]) });

  const msg = (conv: number, text: string) => messageData('message.received', conv, text);
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    keys.refund38 = delivered(T0 + 1_000, 'message.received', msg(38, 'I want a REFUND please'), {
      conversation: '38',
      outcome: 'completed',
    });
    keys.hello38 = delivered(T0 + 2_000, 'message.received', msg(38, 'hello again'), { conversation: '38', outcome: 'dead' });
    keys.refund40 = delivered(T0 + 3_000, 'message.received', msg(40, 'where is my refund?'), { conversation: '40', outcome: 'dead' });
    keys.zoe = delivered(T0 + 4_000, 'contact.created', {
      id: 7,
      name: 'Zoe Adams',
      phone: null,
      email: 'zoe@example.com',
      lifecycle_stage_id: null,
      blocked: false,
      created_at: new Date(T0).toISOString(),
      updated_at: new Date(T0).toISOString(),
    });
    // Its body not kept (KEEP_BODIES=0 on that worker): cannot match, counted.
    keys.unkept = delivered(T0 + 5_000, 'message.received', msg(38, 'refund refund'), { writer: noKeep, conversation: '38' });
    // Not an event with a body: a dead-lettered invalid delivery and a schedule run (not counted as without a body).
    keep.invalid('evt_cut', receipt(T0 + 6_000), null, 'invalid_json', undefined);
    const nightly = `schedule:nightly:${new Date(T0 + 7_000).toISOString()}`;
    keep.scheduled(nightly, T0 + 7_000);
    await flushed(nightly);
  });

  it('= on a number, ~ ignoring case, != and several conditions: newest first, what was read said', async () => {
    const refunds = await list(['data.body~refund']);
    expect(refunds.deliveries.map((d) => d.key)).toEqual([keys.refund40, keys.refund38]);
    expect(refunds).toMatchObject({ scanned: 7, withoutBody: 1, unreadable: 0, more: false, capped: false });
    expect((await list(['data.conversation_id=38', 'data.body~refund'])).deliveries.map((d) => d.key)).toEqual([keys.refund38]);
    expect((await list(['data.conversation_id!=38'])).deliveries.map((d) => d.key)).toEqual([keys.refund40]);
    expect((await list(['data.email=zoe@example.com'])).deliveries).toEqual([
      expect.objectContaining({ key: keys.zoe, event: 'contact.created', handlers: { notes: 'queued' } }),
    ]);
    // Only the events with the field are read: the message without a body is not counted for a contact's field.
    expect(await list(['data.email=nobody@example.com'])).toMatchObject({ deliveries: [], withoutBody: 0, scanned: 7 });
  });

  it('beside the summary filters: event, conversation (in the script), handler and outcome (from the summary first)', async () => {
    expect((await list(['data.body~refund'], { conversation: '38' })).deliveries.map((d) => d.key)).toEqual([keys.refund38]);
    expect((await list(['data.body~refund'], { event: 'message.sent' })).deliveries).toEqual([]);
    const dead = await list(['data.body~refund'], { handler: 'notes', outcome: 'dead' });
    expect(dead.deliveries.map((d) => d.key)).toEqual([keys.refund40]);
    expect((await list(['data.body~e'], { outcome: 'completed' })).deliveries.map((d) => d.key)).toEqual([keys.refund38]);
    expect((await list(['data.body~refund'], { since: T0 + 2_500 })).deliveries.map((d) => d.key)).toEqual([keys.refund40]);
  });

  it('stops at the limit; an unreadable kept body is counted, not thrown or matched', async () => {
    const first = await list(['data.body~refund'], { limit: 1 });
    expect(first).toMatchObject({ deliveries: [expect.objectContaining({ key: keys.refund40 })], more: true });
    const p = uniquePrefix('hist-where-bad');
    const w = new HistoryWriter(redis, { prefix: p, ttlMs: 24 * HOUR, keepBodiesMs: 24 * HOUR }, memoryLogger().log);
    const good = newEventId();
    const bad = newEventId();
    for (const [i, key] of [good, bad].entries()) {
      const raw = Buffer.from(eventBody('message.received', msg(1, 'refund'), { id: key }));
      w.fannedOut(key, receipt(T0 + i), { event: 'message.received', conversation: '1', contact: null, handlers, raw });
    }
    w.flush();
    await waitFor(async () => (await redis.exists(historyKeys(p).summary(bad), historyKeys(p).body(bad))) === 2);
    await redis.set(historyKeys(p).body(bad), 'written by something else');
    const r = await listDeliveries(redis, p, { where: parseWheres(['data.body~refund']) });
    expect(r).toMatchObject({ deliveries: [expect.objectContaining({ key: good })], unreadable: 1, withoutBody: 0 });
  });
});

describe('paging the time index (real redis-server)', () => {
  let redis: Redis;
  const prefix = uniquePrefix('hist-pages');
  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
    redis.disconnect();
  });

  it('reads every delivery once across pages, many received in the same ms; a content query is not cut at 20 000', async () => {
    const w = new HistoryWriter(redis, { prefix, ttlMs: 24 * HOUR, keepBodiesMs: 24 * HOUR }, memoryLogger().log);
    // 1 300 deliveries in 13 ms (100 per ms, so ties cross every page boundary of 500 and of 200), each a match.
    const written = new Set<string>();
    for (let i = 0; i < 1_300; i++) {
      const key = `evt_tie_${String(i).padStart(4, '0')}`;
      written.add(key);
      const at = T0 + Math.floor(i / 100);
      const raw = Buffer.from(eventBody('message.received', messageData('message.received', 5, `tie ${i}`), { id: key, createdMs: at }));
      w.fannedOut(
        key,
        { receivedAt: new Date(at).toISOString(), queuedAt: at, secretIndex: 0, bytes: raw.byteLength, source: 'webhook' },
        { event: 'message.received', conversation: '5', contact: null, handlers: [], raw },
        at,
      );
    }
    w.flush();
    await waitFor(async () => (await redis.exists(historyKeys(prefix).summary('evt_tie_1299'))) === 1);
    // 20 500 index entries newer than them whose history expired (no summary): read, skipped, not matched.
    const index = historyKeys(prefix).index;
    for (let i = 0; i < 20_500; i += 500) {
      await redis.zadd(index, ...Array.from({ length: 500 }, (_, j) => [T0 + HOUR + i + j, `evt_gone_${i + j}`]).flat());
    }
    const found: string[] = [];
    const stats = { scanned: 0, withoutBody: 0, unreadable: 0, capped: false };
    for await (const d of findDeliveries(redis, prefix, { where: parseWheres(['data.body~tie']) }, stats)) found.push(d.key);
    expect(found.length).toBe(1_300);
    expect(new Set(found)).toEqual(written);
    expect(stats).toEqual({ scanned: 21_800, withoutBody: 0, unreadable: 0, capped: false });
    // Newest first: the last ms first; within a ms, as the index orders ties (by key, descending).
    expect(found.slice(0, 2)).toEqual(['evt_tie_1299', 'evt_tie_1298']);
    // The listing without --where still stops at 20 000 and says so.
    const plain = await listDeliveries(redis, prefix, {});
    expect(plain).toMatchObject({ scanned: 20_000, capped: true, more: true, deliveries: [] });
    // The plain listing pages in 200s through the same ties.
    const all = await listDeliveries(redis, prefix, { since: T0, limit: 10_000, scanMax: 100_000 });
    expect(all.deliveries.length).toBe(1_300);
    expect(new Set(all.deliveries.map((d) => d.key))).toEqual(written);
  });
});
