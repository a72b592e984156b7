/** The waits view (/admin/waits): runs parked in durable sleeps and waits, read from Redis, behind the admin's auth. */
import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { defineHandler } from '../../../src/handler/define.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { encodeReached } from '../../../src/queue/waits/reached.js';
import { RunRecords, type ParkedRun } from '../../../src/queue/waits/runs.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const admin = { user: 'ops', password: 'pw-31c9aa-waits' };
const headers = { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` };
const HOSTILE = '<script>alert("x")</script>';

describe('waits view (/admin/waits)', () => {
  const prefix = uniquePrefix('adminwaits');
  let redis: Redis;
  let queues: Queue[];
  let app: Hono;
  const now = Date.now();
  /** A parked run as the worker leaves it (its scope is its job id, made of its delivery key and handler). */
  const run = (
    over: Omit<Partial<ParkedRun>, 'scope'> & Pick<ParkedRun, 'name' | 'handler' | 'kind' | 'dueAt'> & { id: string },
  ): ParkedRun => {
    const { id, ...rest } = over;
    const deliveryKey = rest.deliveryKey ?? `evt_${id}`;
    const scope = jobIdFor(deliveryKey, rest.handler);
    return { deliveryKey, queue: 'handlers', jobId: scope, scope, ...rest };
  };
  const reached = (r: ParkedRun) =>
    encodeReached(
      r.kind === 'sleep' ? { k: 'sleep', due: r.dueAt } : { k: 'wait', due: r.dueAt, since: 0, ev: r.event, key: r.key },
      r.scope,
      r.name,
    );

  beforeAll(async () => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    queues = [new Queue(EVENTS_QUEUE, { connection: redis, prefix }), new Queue(HANDLERS_QUEUE, { connection: redis, prefix })];
    app = new Hono();
    expect(mountAdmin(app, { queues, admin, history: { redis, prefix } })).toBe(true);
    const records = new RunRecords(redis, prefix);
    for (const r of [
      run({ id: 'a', name: 'after-delivery', handler: 'review-request', kind: 'sleep', dueAt: now + 3 * 86_400_000 }),
      run({
        id: 'b',
        name: 'agent-reply',
        handler: 'sla-escalation',
        kind: 'wait-for-event',
        dueAt: now + 600_000,
        event: 'message.sent',
        key: 'conversation:812',
        deliveryKey: 'evt_b/1:x',
      }),
      run({ id: 'c', name: HOSTILE, handler: 'odd', kind: 'sleep', dueAt: now + 60_000 }),
    ])
      await records.save(r.scope, new Map([[`t:${r.name}`, reached(r)]]), 60_000, r);
  });
  afterAll(async () => {
    await Promise.all(queues.map((q) => q.close()));
    await redis.quit();
  });

  const get = (path: string, auth = true) => app.request(path, auth ? { headers } : {});

  it('lists the parked runs soonest due first, each linked to its delivery, everything escaped', async () => {
    const res = await get('/admin/waits');
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('3 runs parked in a durable sleep or wait');
    const order = ['odd', 'sla-escalation', 'review-request'].map((h) => html.indexOf(`<td>${h}</td>`));
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(html).toMatch(/<td>wait<\/td><td>agent-reply<\/td><td>message\.sent <code>conversation:812<\/code><\/td>/);
    expect(html).toContain(`href="/admin/deliveries/${encodeURIComponent('evt_b/1:x')}"`);
    expect(html).toMatch(/>in 10m<\/time>/);
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain('&#60;script&#62;');
    expect(html).toContain('<a href="/admin/waits">Waits</a>');
  });

  it('filters by handler and kind; a bad kind says what was expected; no credentials, no page', async () => {
    const sleeps = await (await get('/admin/waits?kind=sleep')).text();
    expect(sleeps).toContain('<td>review-request</td>');
    expect(sleeps).not.toContain('<td>sla-escalation</td>');
    const one = await (await get('/admin/waits?handler=sla-escalation')).text();
    expect(one).toContain('<td>agent-reply</td>');
    expect(one).not.toContain('<td>review-request</td>');
    expect(await (await get('/admin/waits?handler=nobody')).text()).toContain('No parked run matches (3 parked in all).');
    const bad = await get('/admin/waits?kind=nap');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('kind: expected sleep or wait');
    expect((await get('/admin/waits', false)).status).toBe(401);
  });

  it('marks the runs of handlers no loaded module defines, with the command that cancels them', async () => {
    const loaded = ['review-request', 'sla-escalation'].map((id) => defineHandler({ id, on: ['conversation.opened'], async handle() {} }));
    const withHandlers = new Hono();
    mountAdmin(withHandlers, {
      queues,
      admin,
      history: { redis, prefix },
      rerun: { handlers: () => loaded, budget: { burst: 100, share: 0.5, callsPer10s: 50 } },
    });
    const html = await (await withHandlers.request('/admin/waits', { headers })).text();
    expect(html).toContain('1 parked run belongs to handlers no module of this process defines');
    expect(html).toContain('<code>switchyard waits cancel --handler odd</code>');
    expect(html).toContain('<td>odd <span class="state bad">not loaded</span></td>');
    expect(html).toContain('<td>review-request</td>');
    // Without the loaded handlers (a process without a worker), nothing is marked.
    expect(await (await get('/admin/waits')).text()).not.toContain('not loaded');
  });
});
