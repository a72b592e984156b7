import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness, type World } from '../../support/sandbox.js';

// Spec: POST /contacts/search (rule vocabulary, groups, segment_id, per_page 1..100).
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

const names = (r: { body: { data: { name: string }[] } }): string[] => r.body.data.map((c) => c.name).sort();
const search = (body: unknown, token: string = T.full) => h.api('POST', '/contacts/search', { body, token });

describe('contact search', () => {
  it('matches everyone without rules', async () => {
    const all = await h.api('GET', '/contacts?per_page=100');
    expect(names(await search({}))).toEqual(names(all));
  });

  it('ANDs rules inside a group and ORs groups', async () => {
    expect(
      names(
        await search({
          match: [
            [
              { attribute: 'label', operator: 'has', value: 'customer' },
              { attribute: 'label', operator: 'has', value: 'vip' },
            ],
          ],
        }),
      ),
    ).toEqual(['Carol Chen']);
    expect(
      names(
        await search({
          match: [[{ attribute: 'label', operator: 'has', value: 'vip' }], [{ attribute: 'name', operator: 'contains', value: 'bob' }]],
        }),
      ),
    ).toEqual(['Bob Brown', 'Carol Chen']);
  });

  it('supports the vocabulary: lifecycle_stage, label has_not, language, channel, last_seen, created, email/phone set', async () => {
    const won = acme.lifecycle_stages.find((s) => s.outcome === 'won')!;
    expect(names(await search({ match: [[{ attribute: 'lifecycle_stage', operator: 'is', value: won.id }]] }))).toEqual(['Carol Chen']);
    expect(names(await search({ match: [[{ attribute: 'language', operator: 'is', value: 'ar' }]] }))).toEqual(['Carol Chen']);
    const ig = acme.channels.find((c) => c.type === 'instagram')!;
    expect(names(await search({ match: [[{ attribute: 'channel', operator: 'has', value: ig.id }]] }))).toEqual(['Bob Brown']);
    expect(names(await search({ match: [[{ attribute: 'last_seen', operator: 'within_days', value: 1 }]] }))).toEqual([
      'Alice Adams',
      'Carol Chen',
    ]);
    expect(names(await search({ match: [[{ attribute: 'last_seen', operator: 'older_than_days', value: 1 }]] }))).toEqual(['Bob Brown']);
    expect(names(await search({ match: [[{ attribute: 'created', operator: 'older_than_days', value: 25 }]] }))).toEqual(['Alice Adams']);
    expect(names(await search({ match: [[{ attribute: 'email', operator: 'not_set' }]] }))).toEqual(['Bob Brown']);
    expect(
      names(
        await search({
          match: [
            [
              { attribute: 'phone', operator: 'set' },
              { attribute: 'label', operator: 'has_not', value: 'customer' },
            ],
          ],
        }),
      ),
    ).toEqual(['Bob Brown']);
  });

  it('answers 422 naming the rule and what was allowed for an unknown attribute or operator', async () => {
    const r = await search({
      match: [
        [
          { attribute: 'name', operator: 'set' },
          { attribute: 'shoe_size', operator: 'is', value: 4 },
        ],
      ],
    });
    expect(r.status).toBe(422);
    expect(Object.keys(r.body.errors)).toEqual(['match.0.1.attribute']);
    expect(r.body.errors['match.0.1.attribute'][0]).toContain('lifecycle_stage');
    const inherited = await search({ match: [[{ attribute: 'toString', operator: 'is', value: 1 }]] });
    expect(inherited.status).toBe(422);
    expect(Object.keys(inherited.body.errors)).toEqual(['match.0.0.attribute']);
    const op = await search({ match: [[{ attribute: 'label', operator: 'is', value: 'vip' }]] });
    expect(op.body.errors['match.0.0.operator'][0]).toContain('has, has_not');
  });

  it('answers 422 when a value is missing or names nothing, and for an unknown label', async () => {
    expect((await search({ match: [[{ attribute: 'name', operator: 'contains' }]] })).body.errors).toHaveProperty(['match.0.0.value']);
    expect((await search({ match: [[{ attribute: 'label', operator: 'has', value: 'nope' }]] })).status).toBe(422);
  });

  it('answers 422 when set, not_set or never is given a value (they take none), in the spec error shape', async () => {
    const rules = [
      { attribute: 'email', operator: 'set', value: 'ann@example.com' },
      { attribute: 'name', operator: 'not_set', value: '' },
      { attribute: 'last_seen', operator: 'never', value: 3 },
      { attribute: 'phone', operator: 'set', value: false },
    ];
    const r = await search({ match: [rules] });
    expect(r.status).toBe(422);
    expect(typeof r.body.message).toBe('string');
    expect(Object.keys(r.body.errors)).toEqual(['match.0.0.value', 'match.0.1.value', 'match.0.2.value', 'match.0.3.value']);
    expect(r.body.errors['match.0.2.value'][0]).toContain('never');
    // null, like an absent value, is no value.
    expect((await search({ match: [[{ attribute: 'email', operator: 'set', value: null }]] })).status).toBe(200);
  });

  it('needs the view-phone permission for phone rules, not for others', async () => {
    expect((await search({ match: [[{ attribute: 'phone', operator: 'contains', value: '77' }]] }, T.nophone)).status).toBe(403);
    expect((await search({ match: [[{ attribute: 'name', operator: 'set' }]] }, T.nophone)).status).toBe(200);
  });

  it('runs a saved segment (precedence over match); an unknown segment is 404', async () => {
    const vip = acme.segments[0]!;
    expect(names(await search({ segment_id: vip.id, match: [[{ attribute: 'name', operator: 'contains', value: 'bob' }]] }))).toEqual([
      'Carol Chen',
    ]);
    expect((await search({ segment_id: 999999 })).status).toBe(404);
  });

  it('takes free text and per_page 1..100, and pages with the query cursor', async () => {
    expect(names(await search({ search: 'carol@' }))).toEqual(['Carol Chen']);
    expect((await search({ per_page: 0 })).status).toBe(422);
    expect((await search({ per_page: 101 })).status).toBe(422);
    const first = await search({ per_page: 1 });
    const second = await h.api('POST', `/contacts/search?cursor=${first.body.meta.next_cursor}`, { body: { per_page: 1 } });
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
  });

  it('is a read: contacts:read suffices and Idempotency-Key is ignored', async () => {
    expect((await search({}, T.read)).status).toBe(200);
    const a = await h.api('POST', '/contacts/search', { body: { search: 'alice' }, headers: { 'Idempotency-Key': 's1' } });
    const b = await h.api('POST', '/contacts/search', { body: { search: 'bob' }, headers: { 'Idempotency-Key': 's1' } });
    expect([a.status, b.status, b.headers.get('Idempotent-Replay')]).toEqual([200, 200, null]);
    expect(names(b)).toEqual(['Bob Brown']);
  });
});
