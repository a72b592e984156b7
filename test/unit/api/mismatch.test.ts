import { describe, expect, it } from 'vitest';
import { createApiClient, UnexpectedResponseError } from '../../../src/api/index.js';
import { contact, fakeFetch, fakeTime } from '../../support/fake-fetch.js';

// A page with one record off the spec: the error names that record (position, id, field, value) instead of only failing.
const deal = (id: number, amount: string) => ({
  id,
  name: `Deal ${id}`,
  pipeline: { id: 1, name: 'Sales' },
  stage: { id: 2, name: 'New' },
  status: 'open',
  amount,
  close_date: null,
  owner_id: null,
  organization_id: null,
  source: 'other',
  closed_at: null,
  closed_lost_reason: null,
  contact_ids: [],
  created_at: '2026-01-01T00:00:00Z',
});

function client(page: unknown) {
  const f = fakeFetch(() => ({ body: page }));
  const time = fakeTime();
  return createApiClient({ baseUrl: 'http://127.0.0.1:9/api/v1', token: 't', fetch: f.fetch, clock: time.clock, sleep: time.sleep });
}

describe('an answer that departs from the spec', () => {
  it('names the malformed record of a page by position and id, with the field and the value got', async () => {
    const api = client({ data: [deal(18, '10.00'), deal(17, '1e+300.56'), deal(16, '5.00')], meta: { next_cursor: null, per_page: 50 } });
    const err = await api.deals
      .list()
      .toArray()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    const e = err as UnexpectedResponseError;
    expect(e.records).toEqual([{ index: 1, id: 17, problems: ['amount: expected a decimal string with two decimals (got "1e+300.56")'] }]);
    expect(e.message).toBe(
      'deals.list: answer does not match the spec (record 2 of 3 (id 17): amount: expected a decimal string with two decimals (got "1e+300.56"))',
    );
  });

  it('describes, never quotes, a personal field that is malformed', async () => {
    const bad = { ...contact(4), email: 42, name: ['Ann', 'Lee'] };
    const err = await client({ data: [contact(5), bad], meta: { next_cursor: null, per_page: 50 } })
      .contacts.list()
      .firstPage()
      .catch((e: unknown) => e);
    const e = err as UnexpectedResponseError;
    expect(e.records.map((r) => [r.index, r.id, r.problems.length])).toEqual([[1, 4, 2]]);
    expect(e.message).toMatch(/record 2 of 2 \(id 4\): name: .*\(got an array\); email: .*\(got 42\)/);
    expect(e.message).not.toContain('Ann');
    const phone = { ...contact(6), phone: { n: '+201001234567' } };
    const err2 = (await client({ data: [phone], meta: { next_cursor: null, per_page: 50 } })
      .contacts.list()
      .firstPage()
      .catch((x: unknown) => x)) as UnexpectedResponseError;
    expect(err2.message).not.toContain('201001234567');
  });

  it('says which field of a single record is wrong (no records to name)', async () => {
    const err = (await client({ data: deal(3, '7') })
      .deals.get(3)
      .catch((e: unknown) => e)) as UnexpectedResponseError;
    expect([err.records, err.message]).toEqual([
      [],
      'deals.get: answer does not match the spec (data.amount: expected a decimal string with two decimals (got "7"))',
    ]);
  });
});
