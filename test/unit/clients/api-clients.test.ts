/** The one API client builder (src/clients/api-clients.ts), without Redis: what each option adds to a client. */
import { describe, expect, it } from 'vitest';
import type { CallEvent } from '../../../src/api/transport.js';
import { NotFoundError, ServerError } from '../../../src/api/errors.js';
import { apiClients, configuredApiClients } from '../../../src/clients/api-clients.js';
import { contact, fakeFetch } from '../../support/fake-fetch.js';

const BASE = 'http://127.0.0.1:1/api/v1';
const CONFIG = {
  workspaceApiUrl: BASE,
  workspaceApiToken: 't',
  workspaceApiBurst: 30,
  queuePrefix: 'sy',
  reconcile: { everyMs: undefined, windowMs: 1, budget: 0.2 },
};

describe('apiClients', () => {
  it('a client per call: the process’s observer and the call’s both see each attempt; its keys name its writes', async () => {
    const f = fakeFetch((req) =>
      req.method === 'GET' ? { body: { data: contact(7) } } : { status: 201, body: { data: { id: 1, conversation_id: 3 } } },
    );
    const seen: string[] = [];
    const clients = apiClients({
      baseUrl: BASE,
      token: 't',
      burst: 30,
      fetch: f.fetch,
      onCall: (e: CallEvent) => seen.push(`process ${e.op}`),
    });
    const api = clients({ onCall: (e) => seen.push(`call ${e.op}`), keys: ({ op, path }) => `k:${op}:${path}` });
    await api.contacts.get(7);
    await api.messages.sendText(3, 'hi').catch(() => undefined);
    expect(seen.slice(0, 2)).toEqual(['process contacts.get', 'call contacts.get']);
    const write = f.calls.find((c) => c.method === 'POST');
    expect(write?.headers.get('idempotency-key')).toMatch(/^k:messages\.send\w*:\/conversations\/3\/messages$/);
    // Another client of the same builder: the process's observer only.
    seen.length = 0;
    await clients().contacts.get(7);
    expect(seen).toEqual(['process contacts.get']);
  });

  it('readCache: one cache for every client of the builder; off by default', async () => {
    const f = fakeFetch(() => ({ body: { data: contact(7) } }));
    const cached = apiClients({ baseUrl: BASE, token: 't', burst: 30, fetch: f.fetch, readCache: true });
    await cached().contacts.get(7);
    await cached().contacts.get(7);
    expect(f.calls).toHaveLength(1);
    const plain = apiClients({ baseUrl: BASE, token: 't', burst: 30, fetch: f.fetch });
    await plain().contacts.get(7);
    await plain().contacts.get(7);
    expect(f.calls).toHaveLength(3);
  });

  it('retry bounds apply to every client (doctor’s single check: one attempt)', async () => {
    const f = fakeFetch(() => ({ status: 503, body: { error: { code: 'unavailable', message: 'down' } } }));
    const once = configuredApiClients(CONFIG, undefined, { fetch: f.fetch, retry: { maxAttempts: 1 } });
    await expect(once?.().me()).rejects.toBeInstanceOf(ServerError);
    expect(f.calls).toHaveLength(1);
    const g = fakeFetch(() => ({ status: 404, body: { error: { code: 'not_found', message: 'no' } } }));
    await expect(configuredApiClients(CONFIG, undefined, { fetch: g.fetch })?.().contacts.get(1)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('configuredApiClients: undefined while WORKSPACE_API_URL or _TOKEN is unset', () => {
    expect(configuredApiClients({ ...CONFIG, workspaceApiUrl: undefined }, undefined)).toBeUndefined();
    expect(configuredApiClients({ ...CONFIG, workspaceApiToken: undefined }, undefined)).toBeUndefined();
    expect(typeof configuredApiClients(CONFIG, undefined)).toBe('function');
  });
});
