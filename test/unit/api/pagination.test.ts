import { describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/index.js';
import { contact, fakeFetch } from '../../support/fake-fetch.js';

function pagedApi() {
  const pages: Record<string, { ids: number[]; next: string | null }> = {
    '': { ids: [3, 2], next: 'c1' },
    c1: { ids: [1], next: 'c2' },
    c2: { ids: [], next: null },
  };
  const f = fakeFetch((req) => {
    const cursor = new URL(req.url).searchParams.get('cursor') ?? '';
    const p = pages[cursor]!;
    return { body: { data: p.ids.map((id) => contact(id)), meta: { next_cursor: p.next, per_page: 2 } } };
  });
  return { api: createApiClient({ baseUrl: 'http://127.0.0.1:1/api/v1', token: 't', fetch: f.fetch }), calls: f.calls };
}

describe('pagination', () => {
  it('for await walks every cursor page', async () => {
    const { api, calls } = pagedApi();
    const ids: number[] = [];
    for await (const c of api.contacts.list({ label: 'vip', per_page: 2 })) ids.push(c.id);
    expect(ids).toEqual([3, 2, 1]);
    expect(calls.map((c) => new URL(c.url).search)).toEqual([
      '?label=vip&per_page=2',
      '?label=vip&per_page=2&cursor=c1',
      '?label=vip&per_page=2&cursor=c2',
    ]);
  });

  it('.pages() yields page at a time; nothing is sent before iterating', async () => {
    const { api, calls } = pagedApi();
    const it = api.contacts.list();
    expect(calls).toHaveLength(0);
    const sizes: (string | null)[] = [];
    for await (const p of it.pages()) sizes.push(p.nextCursor);
    expect(sizes).toEqual(['c1', 'c2', null]);
  });

  it('breaking out stops fetching; toArray(limit) and firstPage()', async () => {
    const { api, calls } = pagedApi();
    for await (const c of api.contacts.list()) {
      void c;
      break;
    }
    expect(calls).toHaveLength(1);
    expect((await api.contacts.list().toArray(2)).map((c) => c.id)).toEqual([3, 2]);
    const first = await api.contacts.list().firstPage();
    expect(first).toMatchObject({ nextCursor: 'c1', perPage: 2 });
  });

  it('search pages through POST with the cursor in the query', async () => {
    const f = fakeFetch((req) => ({
      body: { data: [contact(1)], meta: { next_cursor: req.url.includes('cursor') ? null : 'n', per_page: 1 } },
    }));
    const api = createApiClient({ baseUrl: 'http://127.0.0.1:1/api/v1', token: 't', fetch: f.fetch });
    const all = await api.contacts.search({ match: [[{ attribute: 'label', operator: 'has', value: 'vip' }]], per_page: 1 }).toArray();
    expect(all).toHaveLength(2);
    expect(f.calls.map((c) => [c.method, new URL(c.url).pathname + new URL(c.url).search])).toEqual([
      ['POST', '/api/v1/contacts/search'],
      ['POST', '/api/v1/contacts/search?cursor=n'],
    ]);
    expect(f.calls[0]!.body).toEqual({ match: [[{ attribute: 'label', operator: 'has', value: 'vip' }]], per_page: 1 });
    expect(f.calls[0]!.headers.get('idempotency-key')).toBeNull();
  });
});
