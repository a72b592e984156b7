import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness, type World } from '../../support/sandbox.js';

// Spec: Deals, Deal status (the stage is the verdict).
let h: Harness;
let acme: World;
let other: World;
beforeAll(async () => {
  h = await start();
  [acme, other] = await h.world();
});
afterAll(async () => {
  await h.close();
});

const stage = (kind: string, p = 0) => acme.pipelines[p]!.stages.find((s) => s.kind === kind)!;

describe('deals', () => {
  it('creates with defaults: default pipeline, first open stage, source other, amount as decimal string', async () => {
    const r = await h.api('POST', '/deals', { body: { name: 'Deal', amount: 1234.5, contact_id: acme.contact_ids[0] } });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      pipeline: { id: acme.pipelines[0]!.id, name: 'Sales' },
      stage: { id: acme.pipelines[0]!.stages[0]!.id },
      status: 'open',
      amount: '1234.50',
      source: 'other',
      closed_at: null,
      contact_ids: [acme.contact_ids[0]],
    });
  });

  it('validates: name required and max 255, amount min 0, contact of another workspace 422, stage of another pipeline 422', async () => {
    expect((await h.api('POST', '/deals', { body: {} })).body.errors).toHaveProperty('name');
    expect((await h.api('POST', '/deals', { body: { name: 'd'.repeat(256) } })).body.errors).toHaveProperty('name');
    expect((await h.api('POST', '/deals', { body: { name: 'd', amount: -1 } })).body.errors).toHaveProperty('amount');
    expect((await h.api('POST', '/deals', { body: { name: 'd', contact_id: other.contact_ids[0] } })).body.errors).toHaveProperty(
      'contact_id',
    );
    const renewalsStage = acme.pipelines[1]!.stages[0]!.id;
    expect((await h.api('POST', '/deals', { body: { name: 'd', stage_id: renewalsStage } })).body.errors).toHaveProperty('stage_id');
    expect((await h.api('POST', '/deals', { body: { name: 'd' }, token: T.read })).status).toBe(403);
  });

  it('wins on the Won stage, loses on the Lost stage with a reason, reopens on an open stage', async () => {
    const d = (await h.api('POST', '/deals', { body: { name: 'Flow' } })).body.data;
    const won = await h.api('PATCH', `/deals/${d.id}`, { body: { stage_id: stage('won').id } });
    expect([won.body.data.status, won.body.data.closed_at === null]).toEqual(['won', false]);
    const reopened = await h.api('PATCH', `/deals/${d.id}`, { body: { stage_id: stage('open').id } });
    expect([reopened.body.data.status, reopened.body.data.closed_at]).toEqual(['open', null]);
    const lost = await h.api('PATCH', `/deals/${d.id}`, { body: { stage_id: stage('lost').id, closed_lost_reason: 'Too pricey' } });
    expect(lost.body.data).toMatchObject({ status: 'lost', closed_lost_reason: 'Too pricey', stage: { name: 'Lost' } });
    expect((await h.api('PATCH', `/deals/${d.id}`, { body: { stage_id: stage('won', 1).id } })).status).toBe(422);
    expect((await h.api('PATCH', `/deals/${d.id}`, { body: { closed_lost_reason: 'r'.repeat(256) } })).status).toBe(422);
  });

  it('lists with status, contact_id and pipeline_id filters; 404 for unknown', async () => {
    const open = (await h.api('GET', '/deals?status=open', { token: T.read })).body.data;
    expect(open.every((d: { status: string }) => d.status === 'open')).toBe(true);
    const byPipeline = (await h.api('GET', `/deals?pipeline_id=${acme.pipelines[1]!.id}`)).body.data;
    expect(byPipeline).toEqual([]);
    const byContact = (await h.api('GET', `/deals?contact_id=${acme.contact_ids[0]}`)).body.data;
    expect(byContact.length).toBeGreaterThan(0);
    expect((await h.api('GET', '/deals/999999')).status).toBe(404);
  });
});

describe('amounts', () => {
  it('stores every cent of an amount within the bounds exactly, rounds a finer one on its digits, and refuses one beyond them (422)', async () => {
    const largest = await h.api('POST', '/deals', { body: { name: 'Big', amount: 9999999999999.99 } });
    expect([largest.status, largest.body.data.amount]).toEqual([201, '9999999999999.99']);
    for (const [amount, cents] of [
      [0.29, '0.29'],
      [1234567.89, '1234567.89'],
      [0, '0.00'],
      [12.1, '12.10'],
      [1.005, '1.01'],
      [4503599627370.49, '4503599627370.49'],
    ] as const) {
      expect((await h.api('POST', '/deals', { body: { name: 'd', amount } })).body.data.amount).toBe(cents);
    }
    for (const raw of ['1e300', '9007199254740993', '10000000000000']) {
      const r = await h.api('POST', '/deals', { body: `{"name":"d","amount":${raw}}` });
      expect([raw, r.status]).toEqual([raw, 422]);
      expect(r.body.errors.amount[0]).toBe('may not be more than 9999999999999.99');
    }
    const id = largest.body.data.id;
    expect((await h.api('PATCH', `/deals/${id}`, { body: { amount: 1e300 } })).status).toBe(422);
    const list = await h.api('GET', '/deals?per_page=100');
    expect(list.body.data.every((d: { amount: string }) => /^\d+\.\d{2}$/.test(d.amount))).toBe(true);
  });
});
