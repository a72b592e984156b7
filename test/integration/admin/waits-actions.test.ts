/**
 * Cancel and Wake on /admin/waits, on a real pipeline (receiver, worker, sandbox): a confirmation first (nothing
 * changes on it), then the POST acts through the core, the delivery's history says who did it (the admin's user,
 * via admin) and why, and the run does what it was told (a woken wait returns null and the handler writes on).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTrace } from '../../../src/history/read.js';
import { RunRecords, type ParkedRun } from '../../../src/queue/waits/runs.js';
import { conversationBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/admin-waits', import.meta.url));
const admin = { user: 'ops', password: 'pw-admin-waits-ops-2b7f' };
const auth = { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` };
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;

describe('Cancel and Wake on /admin/waits', () => {
  let p: Pipeline;
  let base: string;
  let conv: number;
  let sleeper: ParkedRun;
  let waiter: ParkedRun;
  const keys: { opened?: string; closed?: string } = {};

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS, env: { ADMIN_USER: admin.user, ADMIN_PASSWORD: admin.password } });
    base = p.service.receiver?.http.url as string;
    conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    const opened = conversationBody('conversation.opened', conv, null);
    const closed = conversationBody('conversation.closed', conv, null);
    keys.opened = keyOf(opened);
    keys.closed = keyOf(closed);
    for (const body of [opened, closed]) expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const runs = await waitFor(
      async () => {
        const parked = await new RunRecords(p.redis, p.prefix).parked();
        return parked.length === 2 ? parked : null;
      },
      20_000,
      50,
    );
    sleeper = runs.find((r) => r.handler === 'admin-sleeper') as ParkedRun;
    waiter = runs.find((r) => r.handler === 'admin-waiter') as ParkedRun;
  }, 60_000);
  afterAll(async () => p?.close());

  const get = (path: string) => fetch(`${base}${path}`, { headers: auth, redirect: 'manual' });
  const post = (path: string, form: Record<string, string>, origin = base) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      body: new URLSearchParams(form),
      headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded', Origin: origin },
      redirect: 'manual',
    });
  const parked = async () => (await new RunRecords(p.redis, p.prefix).parked()).map((r) => r.handler).sort();
  const notes = async () =>
    (await p.requests({ method: 'POST' })).filter((r) => r.path === `/conversations/${conv}/notes` && r.status === 201);

  it('lists each run with a Cancel and a Wake button, each asking for confirmation first', async () => {
    const html = await (await get('/admin/waits')).text();
    expect(html.match(/<button type="submit">Cancel…<\/button>/g)).toHaveLength(2);
    expect(html.match(/<button type="submit">Wake…<\/button>/g)).toHaveLength(2);
    const confirm = await get(`/admin/waits/cancel?run=${encodeURIComponent(sleeper.scope)}`);
    expect(confirm.status).toBe(200);
    const text = await confirm.text();
    expect(text).toContain('Cancel a parked run?');
    expect(text).toContain('nothing after its sleep <code>nap</code> runs');
    expect(text).toContain('records it as cancelled by ops (admin)');
    expect(text).toMatch(/<form method="post" action="\/admin\/waits\/cancel">/);
    const wake = await (await get(`/admin/waits/wake?run=${encodeURIComponent(waiter.scope)}`)).text();
    expect(wake).toContain('The wait <code>reply</code> returns null now, as if it had timed out');
    // Asking changed nothing.
    expect(await parked()).toEqual(['admin-sleeper', 'admin-waiter']);
  });

  it('refuses a cancel posted from another site', async () => {
    const forged = await post('/admin/waits/cancel', { run: sleeper.scope }, 'https://evil.example');
    expect(forged.status).toBe(403);
    expect(await parked()).toEqual(['admin-sleeper', 'admin-waiter']);
  });

  it('cancels on confirm: the run leaves the list, the history says cancelled by the admin and why', async () => {
    const res = await post('/admin/waits/cancel', { run: sleeper.scope, reason: 'customer left' });
    expect(res.status).toBe(303);
    const back = res.headers.get('location') as string;
    expect(back).toBe(`/admin/waits?${new URLSearchParams({ done: 'cancelled', run: sleeper.scope }).toString()}`);
    expect(await (await get(back)).text()).toContain(`Run <code>${sleeper.scope}</code> cancelled: no further step runs.`);
    expect(await parked()).toEqual(['admin-waiter']);
    const trace = await readTrace(p.redis, p.prefix, keys.opened as string);
    expect(trace?.handlers['admin-sleeper']).toBe('cancelled');
    expect(trace?.entries.find((e) => e.kind === 'operator')).toMatchObject({
      action: 'cancel',
      by: 'ops',
      via: 'admin',
      reason: 'customer left',
      wait: 'nap',
    });
    const timeline = await (await get(`/admin/deliveries/${encodeURIComponent(keys.opened as string)}`)).text();
    expect(timeline).toContain('admin-sleeper  cancelled in sleep nap by ops (admin): customer left; no further step runs');
    // Once more: it is not parked any more, and nothing is done.
    const again = await post('/admin/waits/cancel', { run: sleeper.scope });
    expect(again.status).toBe(404);
    expect(await again.text()).toContain('Nothing was done.');
  });

  it('wakes a wait on confirm: it returns null, the handler writes on, the history says woken by the admin', async () => {
    const before = (await notes()).length;
    const res = await post('/admin/waits/wake', { run: waiter.scope });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toContain('done=timeout');
    await waitFor(async () => ((await notes()).length > before ? true : null), 20_000, 50);
    const written = (await notes()).map((r) => (r.body as { body: string }).body);
    expect(written).toContain('admin-waiter got null');
    expect(await parked()).toEqual([]);
    const trace = await readTrace(p.redis, p.prefix, keys.closed as string);
    expect(trace?.entries.find((e) => e.kind === 'operator')).toMatchObject({
      action: 'wake',
      by: 'ops',
      via: 'admin',
      outcome: 'timeout',
    });
    // Nothing of the sleeper it cancelled ran.
    expect(written).not.toContain('admin-sleeper woke');
  });
});
