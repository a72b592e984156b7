import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId, messageBody } from '../../support/events.js';
import { waitFor } from '../../support/service.js';
import { startTwoWorkspaces, type TwoWorkspaces } from '../../support/workspaces.js';

const admin = { user: 'operator', password: 'ws-admin-pw-41c2' };
const auth = { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` };

/**
 * The dashboard of a deployment of two workspaces: each workspace's deliveries, waits and reruns under
 * /admin/w/<id>, chosen with ?workspace=<id>; the board shows every workspace's queues, named by workspace.
 */
describe('the dashboard of a deployment of two workspaces', () => {
  let w: TwoWorkspaces;
  let onlyAcme: string;
  let onlyOther: string;

  beforeAll(async () => {
    w = await startTwoWorkspaces({ ADMIN_USER: admin.user, ADMIN_PASSWORD: admin.password });
    const a = messageBody('message.received', 7_101, 'to acme');
    const b = messageBody('message.received', 7_102, 'to other');
    onlyAcme = deliveryId(a);
    onlyOther = deliveryId(b);
    expect((await w.deliver('acme', a)).status).toBe(202);
    expect((await w.deliver('other', b)).status).toBe(202);
    // A run of acme parked in a wait.
    expect((await w.deliver('acme', conversationBody('conversation.closed', 7_103, null))).status).toBe(202);
  });
  afterAll(async () => w?.close());

  const get = (path: string) => fetch(`${w.base}${path}`, { headers: auth, redirect: 'manual' });
  const html = async (path: string) => {
    const r = await get(path);
    expect(r.status, path).toBe(200);
    return r.text();
  };

  it("lists each workspace's deliveries on its own page", async () => {
    await waitFor(async () => (await html('/admin/w/acme/deliveries')).includes(onlyAcme), 15_000);
    await waitFor(async () => (await html('/admin/w/other/deliveries')).includes(onlyOther), 15_000);
    const acme = await html('/admin/w/acme/deliveries');
    expect(acme).not.toContain(onlyOther);
    expect(acme).toContain('workspace <strong>acme</strong>');
    expect(await html('/admin/w/other/deliveries')).not.toContain(onlyAcme);
  });

  it('takes the workspace as a query parameter, and offers the choice without one', async () => {
    const chosen = await get('/admin/deliveries?event=message.received&workspace=other');
    expect(chosen.status).toBe(302);
    expect(chosen.headers.get('location')).toBe('/admin/w/other/deliveries?event=message.received');
    const waits = await get(`/admin/waits?workspace=acme`);
    expect(waits.headers.get('location')).toBe('/admin/w/acme/waits');
    const choice = await html('/admin/deliveries');
    expect(choice).toContain('href="/admin/w/acme/deliveries"');
    expect(choice).toContain('href="/admin/w/other/deliveries"');
    const unknown = await get('/admin/reruns?workspace=nobody');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('No workspace has the id <code>nobody</code>');
  });

  it("shows a workspace's parked runs on its own waits page only", async () => {
    await waitFor(async () => (await html('/admin/w/acme/waits')).includes('ws-reply'), 15_000);
    const other = await html('/admin/w/other/waits');
    expect(other).not.toContain('ws-reply');
    expect(other).toContain('No run is sleeping or waiting.');
  });

  it("shows every workspace's queues on the board, each named by its workspace; a workspace's board shows its own", async () => {
    const all = (await (await get('/admin/api/queues')).json()) as { queues: { name: string; displayName?: string }[] };
    const names = all.queues.map((q) => q.name);
    expect(names).toEqual(expect.arrayContaining(['acme/events', 'other/events', 'acme/handlers', 'other/handlers']));
    expect(all.queues.find((q) => q.name === 'acme/events')?.displayName).toBe('acme · events');
    const acme = (await (await get('/admin/w/acme/api/queues')).json()) as { queues: { name: string }[] };
    expect(acme.queues.map((q) => q.name)).toContain('events');
    expect(acme.queues.map((q) => q.name).some((n) => n.includes('/'))).toBe(false);
  });

  it("keeps the dashboard's guards: basic auth, and writes from its own pages only", async () => {
    expect((await fetch(`${w.base}/admin/w/acme/deliveries`)).status).toBe(401);
    const forged = await fetch(`${w.base}/admin/w/acme/reruns/rr_1/cancel`, {
      method: 'POST',
      headers: { ...auth, Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' },
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
  });
});
