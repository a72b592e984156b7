import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HandlerStateStore } from '../../../src/queue/state/state-store.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

describe('handler state (real Redis)', () => {
  const clients: Redis[] = [];
  beforeAll(() => {
    for (let i = 0; i < 4; i++) clients.push(new Redis(testRedisUrl()));
  });
  afterAll(() => {
    for (const c of clients) c.disconnect();
  });

  it('keeps a JSON value per handler and key until its TTL', async () => {
    const prefix = uniquePrefix('state');
    const store = new HandlerStateStore(clients[0] as Redis, prefix);
    expect(await store.get('sla', 'conversation:42')).toBeUndefined();
    await store.set('sla', 'conversation:42', { escalated: false, since: '2026-11-26T10:00:00Z' }, 60_000);
    expect(await store.get('sla', 'conversation:42')).toEqual({ escalated: false, since: '2026-11-26T10:00:00Z' });
    expect(await store.get('other', 'conversation:42')).toBeUndefined();
    const ttl = await (clients[0] as Redis).pttl(store.keyOf('sla', 'conversation:42'));
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('loses no update when many runs update the same key at once (four connections, 400 increments)', async () => {
    const prefix = uniquePrefix('state');
    const stores = clients.map((c) => new HandlerStateStore(c, prefix));
    await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        (stores[i % 4] as HandlerStateStore).update(
          'counter',
          'contact:7',
          (cur) => ({ n: ((cur as { n?: number } | undefined)?.n ?? 0) + 1 }),
          60_000,
        ),
      ),
    );
    expect(await stores[0]?.get('counter', 'contact:7')).toEqual({ n: 400 });
  });

  it('refuses a value that is not JSON and writes nothing', async () => {
    const store = new HandlerStateStore(clients[0] as Redis, uniquePrefix('state'));
    await expect(store.update('h', 'k', () => undefined as never, 1000)).rejects.toThrow(/must be JSON/);
    expect(await store.get('h', 'k')).toBeUndefined();
  });

  it('a writer that threw or was killed holds the key no longer: the next update goes through', async () => {
    const redis = clients[0] as Redis;
    const store = new HandlerStateStore(redis, uniquePrefix('state'));
    await expect(
      store.update(
        'h',
        'k',
        () => {
          throw new Error('handler bug');
        },
        60_000,
      ),
    ).rejects.toThrow('handler bug');
    expect(await redis.exists(`${store.keyOf('h', 'k')}:lock`)).toBe(0);
    // A killed process's lock (its lease running out soon) delays the next writer, never blocks it.
    await redis.set(`${store.keyOf('h', 'k')}:lock`, 'dead-writer', 'PX', 300);
    expect(await store.update('h', 'k', () => ({ ok: true }), 60_000)).toEqual({ ok: true });
    expect(await store.get('h', 'k')).toEqual({ ok: true });
  });
});
