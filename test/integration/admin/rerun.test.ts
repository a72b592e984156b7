/**
 * Reruns from the deliveries page (/admin/deliveries/rerun, /admin/reruns) on a real pipeline (receiver, worker
 * with its rerun feeder, sandbox API): the plan is the engine's, a confirm starts the batch, its page shows the
 * progress to done, the runs wrote again in the sandbox; bad selections are said in words; cancel stops a batch.
 */
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { loadHandlerDir } from '../../../src/handler/loader.js';
import { listReruns, rerunStatus } from '../../../src/rerun/batch.js';
import { messageBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver } from '../../support/service.js';
import { waitFor } from '../../support/wait.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/rerun-batch', import.meta.url));
const admin = { user: 'ops', password: 'pw-admin-rerun-7c2e' };
const auth = { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` };
const ORIGIN = 'http://switchyard.local';
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;

describe('reruns from the admin', () => {
  let p: Pipeline;
  let app: Hono;
  const keys: string[] = [];

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
    const handlers = (await loadHandlerDir(HANDLERS)).handlers.map((l) => l.handler);
    app = new Hono();
    mountAdmin(app, {
      queues: [],
      admin,
      history: { redis: p.redis, prefix: p.prefix },
      rerun: { handlers: () => handlers, budget: { burst: 100, share: 0.5, callsPer10s: 50 } },
    });
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    for (let i = 0; i < 4; i++) {
      const body = messageBody('message.received', conv, `order ${i}`);
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
      keys.push(keyOf(body));
    }
    await waitFor(
      async () =>
        (await (await get('/admin/deliveries?handler=rerun-note&outcome=completed')).text()).match(/class="key"/g)?.length === 4
          ? true
          : null,
      20_000,
      100,
    );
  }, 60_000);
  afterAll(async () => p?.close());

  const get = (path: string) => app.request(`${ORIGIN}${path}`, { headers: auth });
  const post = (path: string, form: Record<string, string>) =>
    app.request(`${ORIGIN}${path}`, {
      method: 'POST',
      body: new URLSearchParams(form),
      headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'same-origin' },
    });
  const notes = async () => (await p.requests({ method: 'POST' })).filter((r) => /\/notes$/.test(r.path)).length;

  it('offers the loaded handlers below the list, with the filters carried along', async () => {
    const html = await (await get('/admin/deliveries?outcome=completed&since=1h')).text();
    expect(html).toContain('Run these again');
    expect(html).toMatch(/<form class="search rerun" method="get" action="\/admin\/deliveries\/rerun">/);
    expect(html).toMatch(/<input type="hidden" name="outcome" value="completed"><input type="hidden" name="since" value="1h">/);
    expect(html).toContain('<option>rerun-note</option>');
  });

  it('shows the plan: deliveries per event, API calls, time at the share; nothing runs yet', async () => {
    const before = await notes();
    const res = await get('/admin/deliveries/rerun?handler=rerun-note&outcome=completed');
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(/<td>message\.received<\/td><td>4<\/td><td>4<\/td>/);
    expect(html).toContain('50 calls per 10 s');
    expect(html).toContain('Run 4 deliveries again with rerun-note');
    expect(await notes()).toBe(before);
    expect(await listReruns({ redis: p.redis, prefix: p.prefix })).toEqual([]);
  });

  it('says what is wrong with a selection, in words, with a did-you-mean', async () => {
    const typo = await get('/admin/deliveries/rerun?handler=rerun-nte');
    expect(typo.status).toBe(400);
    expect(await typo.text()).toContain('no handler &#34;rerun-nte&#34; in this project; did you mean &#34;rerun-note&#34;?');
    const none = await get('/admin/deliveries/rerun?outcome=completed');
    expect(none.status).toBe(400);
    expect(await none.text()).toContain('handler: choose the handler to run again');
    const pending = await get('/admin/deliveries/rerun?handler=rerun-note&outcome=pending');
    expect(await pending.text()).toContain('those runs have not run yet');
  });

  it('starts the batch on confirm, as the admin, and its page shows the progress to done; the runs wrote again', async () => {
    const before = await notes();
    const res = await post('/admin/deliveries/rerun', { handler: 'rerun-note', outcome: 'completed' });
    expect(res.status).toBe(303);
    const location = res.headers.get('location') as string;
    const batch = decodeURIComponent(location.replace('/admin/reruns/', ''));
    expect((await rerunStatus({ redis: p.redis, prefix: p.prefix }, batch)).by).toBe('admin:ops');
    const done = await waitFor(
      async () => {
        const html = await (await get(location)).text();
        return html.includes('4 done, 0 failed of 4') && html.includes('rerun-state">done') ? html : null;
      },
      30_000,
      100,
    );
    expect(done).not.toContain('http-equiv="refresh"');
    expect(done).toContain('by admin:ops');
    expect(await notes()).toBe(before + 4);
    expect(await (await get('/admin/reruns')).text()).toContain(batch);
    // Each original's timeline links its re-run and the batch; the re-run's links back.
    const original = await (await get(`/admin/deliveries/${encodeURIComponent(keys[0] as string)}`)).text();
    expect(original).toContain(`href="/admin/reruns/${encodeURIComponent(batch)}"`);
    const ref = /<dt>rerun<\/dt><dd><a class="key" href="([^"]+)">/.exec(original)?.[1] as string;
    expect(ref).toMatch(/^\/admin\/deliveries\/r%2F/);
    const rerunPage = await get(ref.replace(/&#38;/g, '&'));
    expect(rerunPage.status).toBe(200);
    expect(await rerunPage.text()).toContain(
      `<dt>rerun of</dt><dd><a class="key" href="/admin/deliveries/${encodeURIComponent(keys[0] as string)}">`,
    );
  });

  it('cancels a running batch from its page: runs not started are dropped, the cancel is recorded as the admin', async () => {
    // Held in the queue (paused) so that the batch is still running when the cancel comes.
    await p.handlerQueues.low.pause();
    try {
      const res = await post('/admin/deliveries/rerun', { handler: 'rerun-note', outcome: 'completed', since: '1h' });
      const location = res.headers.get('location') as string;
      const page = await (await get(location)).text();
      expect(page).toContain('rerun-state">running');
      expect(page).toContain('http-equiv="refresh"');
      const batch = decodeURIComponent(location.replace('/admin/reruns/', ''));
      const cancelled = await post(`${location}/cancel`, {});
      expect(cancelled.status).toBe(303);
      expect(cancelled.headers.get('location')).toBe(location);
      const s = await rerunStatus({ redis: p.redis, prefix: p.prefix }, batch);
      expect(s.state === 'cancelled' || s.state === 'cancelling').toBe(true);
      expect(s.cancelledBy).toBe('admin:ops');
      const after = await (await get(location)).text();
      expect(after).toContain('cancelled by admin:ops');
      expect(after).not.toContain('Cancel this rerun');
    } finally {
      await p.handlerQueues.low.resume();
    }
  });

  it('refuses a start posted from another site, and answers an unknown batch in words', async () => {
    const forged = await app.request(`${ORIGIN}/admin/deliveries/rerun`, {
      method: 'POST',
      body: new URLSearchParams({ handler: 'rerun-note' }),
      headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example' },
    });
    expect(forged.status).toBe(403);
    const unknown = await get('/admin/reruns/rr-nope');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('is not a rerun batch id');
  });
});
