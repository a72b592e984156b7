import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import { decodeInboxItem } from '../../../src/queue/inbox-item.js';
import { IngestStore, MAX_INGEST_BATCH } from '../../../src/queue/ingest.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { createRedisConnection } from '../../../src/redis/connection.js';
import { startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { uniquePrefix } from '../../support/redis.js';

/**
 * A redis-server of this file's own: MONITOR sees every client of its server,
 * and on the shared one the test files running beside this one keep it busy;
 * ioredis then takes monitor lines that arrive with MONITOR's own reply, or
 * while the monitor disconnects, for replies to commands it never sent
 * ("Command queue state error", thrown).
 */
let server: ManagedRedis;
let dir: string;
const testRedisUrl = () => server.url;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sy-ingest-batch-'));
  server = await startManagedRedis({ dir });
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const delivery = (key: string, body = `{"event_id":"${key}","event":"lead.won"}`): StoredDelivery => ({
  key,
  name: 'lead.won',
  receivedAt: new Date().toISOString(),
  secretIndex: 0,
  headers: { 'content-type': 'application/json' },
  body,
});

/** The commands Redis ran while `work` ran (MONITOR: clients' commands and those a script called), as argument lists. */
async function monitored(work: () => Promise<void>): Promise<string[][]> {
  const monitorClient = new Redis(testRedisUrl());
  const monitor = await monitorClient.monitor();
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => seen.push(args));
  try {
    await work();
    await new Promise((r) => setTimeout(r, 200)); // MONITOR lines trail the replies
  } finally {
    monitor.disconnect();
    monitorClient.disconnect();
  }
  return seen;
}

/** Script runs that touched `inbox`, as Redis itself saw them (MONITOR). */
async function scriptRuns(inbox: string, work: () => Promise<void>): Promise<number> {
  const seen = await monitored(work);
  return seen.filter((args) => /^(evalsha|eval)$/i.test(args[0] ?? '') && args.includes(inbox)).length;
}

describe('IngestStore group commit', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  });
  afterAll(() => redis.disconnect());

  it('writes one turn of deliveries with one script run; repeats in the batch are duplicates; order is kept', async () => {
    const prefix = uniquePrefix('batch');
    const keys = ingestKeys(prefix);
    const store = new IngestStore(redis, prefix, 60_000);
    await store.put(delivery('seen-before'));
    const order = ['a', 'b', 'seen-before', 'c', 'a', 'd', 'b', 'e'];
    let outcomes: string[] = [];
    const runs = await scriptRuns(keys.inbox, async () => {
      outcomes = await Promise.all(order.map((k) => store.put(delivery(k))));
    });
    expect(outcomes).toEqual(['accepted', 'accepted', 'duplicate', 'accepted', 'duplicate', 'accepted', 'duplicate', 'accepted']);
    expect(runs).toBe(1);
    const inbox = (await redis.lrange(keys.inbox, 0, -1)).map((raw) => decodeInboxItem(raw).key);
    expect(inbox).toEqual(['seen-before', 'a', 'b', 'c', 'd', 'e']);
    for (const k of ['a', 'b', 'c', 'd', 'e']) expect(await redis.pttl(keys.dedupe(k))).toBeGreaterThan(50_000);
  });

  it('claims each delivery with one command: a batch runs a SET NX per delivery, one RPUSH and one ZADD, no EXISTS', async () => {
    const prefix = uniquePrefix('batchcalls');
    const keys = ingestKeys(prefix);
    const store = new IngestStore(redis, prefix, 60_000);
    await store.put(delivery('old'));
    const seen = await monitored(async () => {
      await Promise.all(['n1', 'old', 'n2', 'n1', 'n3'].map((k) => store.put(delivery(k))));
    });
    // The commands the script called, by name (MONITOR lists them after the EVALSHA that ran them).
    const called = seen
      .filter((args) => args.some((a) => a.startsWith(prefix)) && !/^(evalsha|eval)$/i.test(args[0] ?? ''))
      .map((args) => (args[0] ?? '').toUpperCase());
    expect(called.filter((c) => c === 'SET')).toHaveLength(5);
    expect(called.filter((c) => c !== 'SET')).toEqual(['RPUSH', 'ZADD']);
    for (const args of seen.filter((a) => (a[0] ?? '').toUpperCase() === 'SET' && a[1]?.startsWith(prefix))) {
      expect(args.slice(3).map((a) => a.toUpperCase())).toEqual(['NX', 'PX', '60000']);
    }
    expect((await redis.zrange(keys.pendingFanOut, '0', '-1')).sort()).toEqual(['n1', 'n2', 'n3', 'old']);
  });

  it('splits a turn into batches of at most maxBatch deliveries', async () => {
    const prefix = uniquePrefix('batchmax');
    const keys = ingestKeys(prefix);
    const store = new IngestStore(redis, prefix, 60_000, { maxBatch: 10 });
    const runs = await scriptRuns(keys.inbox, async () => {
      const outcomes = await Promise.all(Array.from({ length: 25 }, (_, i) => store.put(delivery(`k${i}`))));
      expect(outcomes.every((o) => o === 'accepted')).toBe(true);
    });
    expect(runs).toBe(3);
    expect(await redis.llen(keys.inbox)).toBe(25);
  });

  it('stores bodies byte for byte, newlines, CRLF, non-ASCII and empty included, from text or from the raw bytes', async () => {
    const prefix = uniquePrefix('batchbody');
    const store = new IngestStore(redis, prefix, 60_000);
    const body = '{\n  "event_id": "multi",\n  "text": "Olá 🚚\\n linha\r\n"\n}\n';
    await Promise.all([
      store.put(delivery('as-text', body)),
      store.put(delivery('as-bytes', body), Buffer.from(body, 'utf8')),
      store.put(delivery('empty', ''), Buffer.alloc(0)),
    ]);
    const items = (await redis.lrange(ingestKeys(prefix).inbox, 0, -1)).map((raw) => decodeInboxItem(raw));
    expect(items.map((d) => [d.key, d.body])).toEqual([
      ['as-text', body],
      ['as-bytes', body],
      ['empty', ''],
    ]);
  });

  it('a batch the script cannot finish writes nothing: no key is claimed, so the retry is accepted', async () => {
    const prefix = uniquePrefix('batchfail');
    const keys = ingestKeys(prefix);
    const store = new IngestStore(redis, prefix, 60_000);
    await redis.set(keys.inbox, 'not a list'); // RPUSH fails with WRONGTYPE
    const first = await Promise.allSettled(['p', 'q'].map((k) => store.put(delivery(k))));
    expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await redis.exists(keys.dedupe('p'), keys.dedupe('q'), keys.pendingFanOut)).toBe(0);
    await redis.del(keys.inbox);
    expect(await Promise.all(['p', 'q'].map((k) => store.put(delivery(k))))).toEqual(['accepted', 'accepted']);
    expect(await redis.llen(keys.inbox)).toBe(2);
  });

  it('caps a batch at MAX_INGEST_BATCH deliveries whatever maxBatch says', async () => {
    const prefix = uniquePrefix('batchcap');
    const keys = ingestKeys(prefix);
    const store = new IngestStore(redis, prefix, 60_000, { maxBatch: 50_000 });
    const n = MAX_INGEST_BATCH * 2 + 10;
    const runs = await scriptRuns(keys.inbox, async () => {
      const outcomes = await Promise.all(Array.from({ length: n }, (_, i) => store.put(delivery(`c${i}`))));
      expect(outcomes.every((o) => o === 'accepted')).toBe(true);
    });
    expect(runs).toBe(3);
    expect(await redis.llen(keys.inbox)).toBe(n);
  });

  it('sends a batch early once its payloads reach maxBatchBytes', async () => {
    const prefix = uniquePrefix('batchbytes');
    const keys = ingestKeys(prefix);
    const store = new IngestStore(redis, prefix, 60_000, { maxBatchBytes: 4_000 });
    const big = `{"pad":"${'x'.repeat(1_500)}"}`;
    const runs = await scriptRuns(keys.inbox, async () => {
      await Promise.all(Array.from({ length: 7 }, (_, i) => store.put(delivery(`b${i}`, big))));
    });
    expect(runs).toBe(3); // ~1.7 KB each: sent at the 3rd and the 6th, the 7th at the end of the turn
    expect(await redis.llen(keys.inbox)).toBe(7);
  });

  it('rejects every delivery of a batch when Redis is unreachable', async () => {
    const dead = createRedisConnection('redis://127.0.0.1:1', 'producer');
    dead.on('error', () => undefined);
    const store = new IngestStore(dead, uniquePrefix('batchdead'), 60_000);
    try {
      const results = await Promise.allSettled(['x', 'y', 'z'].map((k) => store.put(delivery(k))));
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    } finally {
      dead.disconnect();
    }
  });
});
