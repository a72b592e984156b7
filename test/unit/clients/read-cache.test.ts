import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/api/client.js';
import { ReadCache } from '../../../src/clients/read-cache.js';

/** A client-shaped object counting calls (only what the cache touches). */
function fakeClient() {
  const calls: string[] = [];
  let fail = false;
  const client = {
    contacts: {
      get: async (id: number) => {
        calls.push(`get ${id}`);
        if (fail) throw new Error('boom');
        return { id };
      },
      update: async (id: number) => {
        calls.push(`update ${id}`);
        return { id };
      },
      list: () => {
        calls.push('list');
        return [];
      },
    },
  };
  return {
    client: client as unknown as ApiClient,
    calls,
    failNext: (v: boolean) => {
      fail = v;
    },
  };
}

describe('ReadCache (enrichment reads)', () => {
  it('shares a read in flight and reuses it within the TTL', async () => {
    let now = 0;
    const cache = new ReadCache(5_000, () => now);
    const { client, calls } = fakeClient();
    const api = cache.wrap(client);
    const [a, b] = await Promise.all([api.contacts.get(1), api.contacts.get(1)]);
    expect(a).toEqual({ id: 1 });
    expect(b).toEqual({ id: 1 });
    await api.contacts.get(1);
    expect(calls).toEqual(['get 1']);
    now = 5_001;
    await api.contacts.get(1);
    expect(calls).toEqual(['get 1', 'get 1']);
  });

  it('a write empties it, so a handler never reads back something older than its own write', async () => {
    const cache = new ReadCache(5_000, () => 0);
    const { client, calls } = fakeClient();
    const api = cache.wrap(client);
    await api.contacts.get(1);
    await api.contacts.update(1, {});
    await api.contacts.get(1);
    expect(calls).toEqual(['get 1', 'update 1', 'get 1']);
  });

  it('never caches a failed read', async () => {
    const cache = new ReadCache(5_000, () => 0);
    const { client, calls, failNext } = fakeClient();
    const api = cache.wrap(client);
    failNext(true);
    await expect(api.contacts.get(2)).rejects.toThrow('boom');
    failNext(false);
    await expect(api.contacts.get(2)).resolves.toEqual({ id: 2 });
    expect(calls).toEqual(['get 2', 'get 2']);
  });

  it('holds at most maxEntries (read-mostly workers do not grow without bound)', async () => {
    const cache = new ReadCache(60_000, () => 0, 10);
    const { client } = fakeClient();
    const api = cache.wrap(client);
    for (let i = 0; i < 50; i++) await api.contacts.get(i);
    expect(cache.size).toBeLessThanOrEqual(10);
  });
});
