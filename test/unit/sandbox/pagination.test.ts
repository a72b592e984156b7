import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Answer, type Harness } from '../../support/sandbox.js';

// Spec: Endpoints conventions (cursor pages, per_page default 50 max 100, newest first).
let h: Harness;
beforeAll(async () => {
  h = await start();
  for (let i = 0; i < 120; i++) await h.api('POST', '/contacts', { body: { name: `Page ${String(i).padStart(3, '0')}` } });
});
afterAll(async () => {
  await h.close();
});

describe('pagination', () => {
  it('defaults to 50 per page and allows at most 100', async () => {
    const r = await h.api('GET', '/contacts');
    expect([r.body.data.length, r.body.meta.per_page]).toEqual([50, 50]);
    expect(typeof r.body.meta.next_cursor).toBe('string');
    expect((await h.api('GET', '/contacts?per_page=100')).body.data).toHaveLength(100);
    expect((await h.api('GET', '/contacts?per_page=101')).status).toBe(422);
    expect((await h.api('GET', '/contacts?per_page=0')).status).toBe(422);
  });

  it('walks every record once, newest first, ending with next_cursor null', async () => {
    const seen: { id: number; name: string }[] = [];
    let cursor: string | null = null;
    do {
      const r: Answer = await h.api('GET', `/contacts?per_page=33${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...r.body.data);
      cursor = r.body.meta.next_cursor;
    } while (cursor);
    expect(new Set(seen.map((c) => c.id)).size).toBe(seen.length);
    expect(seen.length).toBe(123);
    expect(seen[0]!.name).toBe('Page 119');
    expect(seen.findIndex((c) => c.name === 'Page 000')).toBeGreaterThan(seen.findIndex((c) => c.name === 'Page 001'));
  });

  it('neither repeats nor skips when records are created between pages', async () => {
    const first = await h.api('GET', '/contacts?per_page=10');
    await h.api('POST', '/contacts', { body: { name: 'Between pages' } });
    const second = await h.api('GET', `/contacts?per_page=10&cursor=${first.body.meta.next_cursor}`);
    const ids = [...first.body.data, ...second.body.data].map((c: { id: number }) => c.id);
    expect(new Set(ids).size).toBe(20);
    expect(second.body.data.some((c: { name: string }) => c.name === 'Between pages')).toBe(false);
  });

  it('answers 422 for a cursor it did not issue', async () => {
    expect((await h.api('GET', '/contacts?cursor=garbage')).status).toBe(422);
  });

  it('answers 422, not an empty page, for cursors that decode to something it never issues', async () => {
    const issued = (await h.api('GET', '/contacts?per_page=1')).body.meta.next_cursor as string;
    expect((await h.api('GET', `/contacts?per_page=1&cursor=${issued}`)).status).toBe(200);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const [payload, tag] = issued.split('.') as [string, string];
    const [time, id] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [number, number];
    // W10 is "[]"; then a single number, three numbers, fractions, an issued cursor with a stray character,
    // well-formed pairs it never sent (untagged, or with the tag of another pair) and an issued one without its tag.
    const neverSent = [b64([-1, 2]), `${b64([-1, 2])}.${tag}`, `${b64([time, id - 1])}.${tag}`, payload, `${issued}.${tag}`];
    for (const cursor of ['W10', b64([1]), b64([1, 2, 3]), b64([1.5, 2]), `${issued}!`, ...neverSent]) {
      const r = await h.api('GET', `/contacts?cursor=${encodeURIComponent(cursor)}`);
      expect([cursor, r.status]).toEqual([cursor, 422]);
      expect(r.body.errors.cursor[0]).toMatch(/is not a cursor this API issued/);
    }
  });
});
