import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness, type World } from '../../../support/sandbox.js';

// Spec: contact labels endpoints.
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

const labelNames = (r: { body: { data: { name: string }[] } }): string[] => r.body.data.map((l) => l.name).sort();

describe('labels', () => {
  it('adds by id or exact name, answers the labels after the call, adding twice changes nothing', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'Lab' } })).body.data;
    const vip = acme.labels.find((l) => l.name === 'vip')!;
    const r = await h.api('POST', `/contacts/${c.id}/labels`, { body: { labels: [vip.id, 'customer'] } });
    expect(r.status).toBe(200);
    expect(labelNames(r)).toEqual(['customer', 'vip']);
    expect(labelNames(await h.api('POST', `/contacts/${c.id}/labels`, { body: { labels: ['vip'] } }))).toEqual(['customer', 'vip']);
    expect(labelNames(await h.api('GET', `/contacts/${c.id}/labels`, { token: T.read }))).toEqual(['customer', 'vip']);
  });

  it('fails the whole call with 422 for a label that does not exist, and never creates labels', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'Lab2' } })).body.data;
    const r = await h.api('POST', `/contacts/${c.id}/labels`, { body: { labels: ['vip', 'brand-new'] } });
    expect(r.status).toBe(422);
    expect(r.body.errors).toHaveProperty(['labels.1']);
    expect((await h.api('GET', `/contacts/${c.id}/labels`)).body.data).toEqual([]);
    expect((await h.world())[0].labels.some((l) => l.name === 'brand-new')).toBe(false);
    expect((await h.api('POST', `/contacts/${c.id}/labels`, { body: { labels: [] } })).status).toBe(422);
  });

  it('removes by id or name; removing a label the contact lacks is not an error; the label stays', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'Lab3' } })).body.data;
    await h.api('POST', `/contacts/${c.id}/labels`, { body: { labels: ['vip', 'customer'] } });
    expect(labelNames(await h.api('DELETE', `/contacts/${c.id}/labels/vip`))).toEqual(['customer']);
    const again = await h.api('DELETE', `/contacts/${c.id}/labels/vip`);
    expect([again.status, labelNames(again)]).toEqual([200, ['customer']]);
    expect((await h.world())[0].labels.some((l) => l.name === 'vip')).toBe(true);
  });
});
