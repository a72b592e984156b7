import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { parseEnvelope } from '../../../src/events/envelope.js';
import { readKeptBodies, readKeptDeliveries } from '../../../src/history/bodies.js';
import { historyKeys } from '../../../src/history/keys.js';
import { historyObserver } from '../../../src/history/observe.js';
import { LifecycleBus } from '../../../src/lifecycle/bus.js';
import type { DeliveryFacts } from '../../../src/lifecycle/events.js';
import { eventBody, messageData, newEventId } from '../../support/events.js';
import { memoryLogger } from '../../support/service.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { waitFor } from '../../support/wait.js';

/*
 * Kept bodies (KEEP_BODIES) written by the worker's history subscriber at fan-out, and read back by the readers
 * `deliveries --where` and `rerun` use: the exact bytes, for the window set, none when off.
 */

const RECEIVED = '2026-06-01T12:00:00.000Z';

function facts(raw: Buffer, over: Partial<DeliveryFacts> = {}): DeliveryFacts {
  return {
    key: newEventId(),
    name: 'message.received',
    receivedAt: RECEIVED,
    queuedAt: Date.parse(RECEIVED) + 5,
    secretIndex: 1,
    bytes: raw.byteLength,
    source: 'webhook',
    traceparent: undefined,
    raw,
    job: { queue: 'events', id: '1', attempt: 1 },
    ...over,
  };
}

describe('kept bodies (real redis-server)', () => {
  let redis: Redis;
  const prefixes: string[] = [];
  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    for (const prefix of prefixes) {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
    }
    redis.disconnect();
  });

  /** A history subscriber with `env`, and a function that fans a body out through it. */
  function observer(env: Record<string, string>) {
    const prefix = uniquePrefix('hist-body');
    prefixes.push(prefix);
    const logger = memoryLogger();
    const history = historyObserver(loadConfig({ QUEUE_PREFIX: prefix, ...env }), redis, logger.log);
    const bus = new LifecycleBus().subscribe(history?.subscriber);
    const fanOut = (d: DeliveryFacts, ok = true) => {
      if (ok) bus.emit({ type: 'fanned-out', delivery: d, envelope: parseEnvelope(d.raw), ok: true, runs: [] });
      else
        bus.emit({
          type: 'fanned-out',
          delivery: d,
          envelope: parseEnvelope(d.raw),
          ok: false,
          error: Object.assign(new Error('invalid_json: cut'), { code: 'invalid_delivery' }),
        });
      history?.flush();
    };
    return { prefix, fanOut, lines: logger.lines, history };
  }
  const summaryWritten = (prefix: string, key: string) =>
    waitFor(async () => (await redis.exists(historyKeys(prefix).summary(key))) === 1 || null);

  it('keeps the exact bytes at fan-out, compressed, for HISTORY_TTL by default; the readers give them back in order', async () => {
    const { prefix, fanOut, lines } = observer({ LOG_LEVEL: 'debug' });
    const text = eventBody('message.received', messageData('message.received', 38, 'a refund, please — zoe@example.com, +44 20 7946 0958'));
    // Not UTF-8: kept as the bytes, not as text.
    const odd = Buffer.concat([Buffer.from(text), Buffer.from([0xff, 0xfe])]);
    const a = facts(Buffer.from(text));
    const b = facts(odd, { source: 'reconcile', secretIndex: -1 });
    fanOut(a);
    fanOut(b);
    await summaryWritten(prefix, b.key);
    const bodies = await readKeptBodies(redis, prefix, [b.key, 'evt_never_seen', a.key]);
    expect(bodies[0]?.equals(odd)).toBe(true);
    expect(bodies[1]).toBeNull();
    expect(bodies[2]?.toString('utf8')).toBe(text);
    const stored = await redis.getBuffer(historyKeys(prefix).body(a.key));
    expect(stored!.byteLength).toBeLessThan(Buffer.byteLength(text));
    expect(stored!.includes(Buffer.from('zoe@example.com'))).toBe(false);
    // Never logged (the subscriber's logger is at debug).
    expect(lines.join('')).not.toMatch(/zoe@example\.com|7946|refund/);
    const ttl = await redis.pttl(historyKeys(prefix).body(a.key));
    expect(ttl).toBeGreaterThan(6 * 86_400_000);
    expect(ttl).toBeLessThanOrEqual(7 * 86_400_000);

    // What `rerun` rebuilds: the delivery as its `events` job held it.
    const [ra, rb, none] = await readKeptDeliveries(redis, prefix, [a.key, b.key, 'evt_never_seen']);
    expect(ra).toEqual({ key: a.key, name: 'message.received', receivedAt: RECEIVED, secretIndex: 1, body: text, headers: {} });
    expect(rb).toMatchObject({ key: b.key, source: 'reconcile', secretIndex: -1, bodyBase64: odd.toString('base64') });
    expect(none).toBeNull();
  });

  it('KEEP_BODIES sets the window; 0 keeps none (the history is still written); an invalid delivery keeps none', async () => {
    const short = observer({ KEEP_BODIES: '1h' });
    const off = observer({ KEEP_BODIES: '0' });
    const d = facts(Buffer.from(eventBody()));
    short.fanOut(d);
    off.fanOut(d);
    const bad = facts(Buffer.from('{"id":"evt_cut","event":"message.rec'));
    short.fanOut(bad, false);
    await summaryWritten(short.prefix, d.key);
    await summaryWritten(off.prefix, d.key);
    await summaryWritten(short.prefix, bad.key);
    const ttl = await redis.pttl(historyKeys(short.prefix).body(d.key));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    expect(await readKeptBodies(redis, off.prefix, [d.key])).toEqual([null]);
    expect(await redis.keys(`${off.prefix}:hist:b:*`)).toEqual([]);
    expect(await readKeptBodies(redis, short.prefix, [bad.key])).toEqual([null]);
  });

  it('HISTORY=off keeps none, and says so at start-up when KEEP_BODIES was set', () => {
    const set = observer({ HISTORY: 'off', KEEP_BODIES: '2d' });
    expect(set.history).toBeUndefined();
    expect(set.lines.join('')).toMatch(/KEEP_BODIES is set but HISTORY=off: no body is kept/);
    const unset = observer({ HISTORY: 'off' });
    expect(unset.lines).toEqual([]);
  });
});
