import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { historyKeys } from '../../../src/history/keys.js';
import type { AttemptEntry, FanOutEntry } from '../../../src/history/record.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

const admin = { user: 'ops', password: 'pw-5be0d2-deliveries' };
const headers = { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` };
const HOSTILE = '<script>alert("x")</script>';

/** Writes a delivery's history as the workers do (summary hash, entries list, index). */
async function record(
  redis: Redis,
  prefix: string,
  key: string,
  at: number,
  summary: Record<string, string>,
  entries: object[],
): Promise<void> {
  const k = historyKeys(prefix);
  await redis.hset(k.summary(key), { receivedAt: String(at), queuedAt: String(at + 2), ...summary });
  if (entries.length) await redis.rpush(k.entries(key), ...entries.map((e) => JSON.stringify(e)));
  await redis.zadd(k.index, at, key);
}

describe('deliveries view (/admin/deliveries)', () => {
  const prefix = uniquePrefix('adminhist');
  let redis: Redis;
  let queues: Queue[];
  let app: Hono;
  const t0 = Date.now() - 60_000;
  const DEAD = 'evt_view_dead/1:x'; // a key with characters that need encoding in a path and a job id

  beforeAll(async () => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    queues = [new Queue(EVENTS_QUEUE, { connection: redis, prefix }), new Queue(HANDLERS_QUEUE, { connection: redis, prefix })];
    app = new Hono();
    expect(mountAdmin(app, { queues, admin, history: { redis, prefix } })).toBe(true);

    const fanout: FanOutEntry = {
      kind: 'fanout',
      at: t0 + 5,
      handlers: [{ id: 'note-on-message', placement: 'queued', priority: 'normal' }],
    };
    const ok: AttemptEntry = {
      kind: 'attempt',
      at: t0 + 40,
      startedAt: t0 + 10,
      handler: 'note-on-message',
      attempt: 1,
      outcome: 'completed',
      steps: [{ name: 'conv', source: 'run' }],
      calls: [
        {
          op: 'notes.create',
          method: 'POST',
          path: '/conversations/812/notes',
          status: 201,
          idempotencyKey: 'idem-ok-1',
          replayed: false,
          ms: 12,
          waitMs: 0,
          try: 1,
        },
      ],
    };
    await record(
      redis,
      prefix,
      'evt_view_ok',
      t0,
      { event: 'message.received', conversation: '812', contact: '7', 'h:note-on-message': 'completed' },
      [fanout, ok],
    );
    const dead: AttemptEntry = {
      kind: 'attempt',
      at: t0 + 1_050,
      startedAt: t0 + 1_010,
      handler: 'note-on-message',
      attempt: 1,
      outcome: 'dead',
      error: { class: 'NotFoundError', message: 'conversation 987654321 not found' },
      steps: [],
      calls: [
        {
          op: 'conversations.get',
          method: 'GET',
          path: '/conversations/813',
          status: 200,
          idempotencyKey: null,
          replayed: false,
          ms: 4,
          waitMs: 7,
          try: 1,
        },
        {
          op: 'notes.create',
          method: 'POST',
          path: '/conversations/987654321/notes',
          status: 404,
          idempotencyKey: 'idem-dead-1',
          replayed: false,
          ms: 9,
          waitMs: 0,
          try: 1,
          error: 'NotFoundError: 404',
        },
      ],
    };
    await record(
      redis,
      prefix,
      DEAD,
      t0 + 1_000,
      { event: 'message.received', conversation: '813', contact: '8', 'h:note-on-message': 'dead' },
      [{ ...fanout, at: t0 + 1_005 }, dead],
    );
    await record(redis, prefix, 'evt_view_hostile', t0 + 2_000, { event: HOSTILE, conversation: '814', 'h:<b>bold</b>': 'completed' }, [
      { kind: 'invalid', at: t0 + 2_001, reason: `invalid_json: ${HOSTILE}` },
    ]);
  });
  afterAll(async () => {
    await Promise.allSettled(queues.map((q) => q.close()));
    redis.disconnect();
  });

  it('answers 401 without credentials and 404 when no history source is given', async () => {
    for (const path of ['/admin/deliveries', `/admin/deliveries/evt_view_ok`, '/admin/deliveries/job/d/evt_view_ok']) {
      expect((await app.request(path)).status, path).toBe(401);
    }
    const off = new Hono();
    mountAdmin(off, { queues, admin });
    expect((await off.request('/admin/deliveries', { headers })).status).toBe(404);
  });

  it('lists deliveries newest first, each linking to its timeline', async () => {
    const res = await app.request('/admin/deliveries', { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    const order = ['evt_view_hostile', DEAD, 'evt_view_ok'].map((k) => html.indexOf(`href="/admin/deliveries/${encodeURIComponent(k)}"`));
    expect(order.every((i) => i > 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(html).not.toContain(admin.password);
  });

  it('filters by outcome, handler, conversation, contact, event and since', async () => {
    const keysIn = async (q: string) => {
      const res = await app.request(`/admin/deliveries?${q}`, { headers });
      expect(res.status, q).toBe(200);
      return [...(await res.text()).matchAll(/class="key" href="[^"]+">([^<]+)</g)].map((m) => m[1]);
    };
    expect(await keysIn('outcome=dead')).toEqual([DEAD]);
    expect(await keysIn('handler=note-on-message&outcome=completed')).toEqual(['evt_view_ok']);
    expect(await keysIn('conversation=812')).toEqual(['evt_view_ok']);
    expect(await keysIn('contact=8')).toEqual([DEAD]);
    expect(await keysIn('event=message.received')).toEqual([DEAD, 'evt_view_ok']);
    expect(await keysIn('since=1h')).toHaveLength(3);
    expect(await keysIn(`since=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}`)).toEqual([]);
    // The form keeps what was asked.
    expect(await (await app.request('/admin/deliveries?outcome=dead&contact=8', { headers })).text()).toMatch(
      /<option selected>dead<\/option>[\s\S]*name="contact" value="8"/,
    );
    const bad = await app.request('/admin/deliveries?outcome=nope&conversation=abc&since=yesterday', { headers });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(
      /outcome: expected one of[\s\S]*conversation: expected a numeric id[\s\S]*since: &#34;yesterday&#34; is neither an age nor a date; expected an age/,
    );
    // Read as strictly as the CLI's --since: no rollover to March, no local time.
    const rolled = await app.request('/admin/deliveries?since=2026-02-30', { headers });
    expect(rolled.status).toBe(400);
    expect(await rolled.text()).toContain('since: &#34;2026-02-30&#34; does not exist: February 2026 has 28 days');
    expect((await app.request('/admin/deliveries?since=2026-02-03T10:00:00', { headers })).status).toBe(400);
  });

  it('shows the timeline of a dead-lettered run with its failing call marked', async () => {
    const res = await app.request(`/admin/deliveries/${encodeURIComponent(DEAD)}`, { headers });
    expect(res.status).toBe(200);
    const html = await res.text();
    for (const s of [
      'received',
      'queued (events)',
      'fan-out: note-on-message (queued, normal)',
      'dead (dead-lettered)',
      'NotFoundError: conversation 987654321 not found',
    ])
      expect(html).toContain(s);
    const failed = [...html.matchAll(/<tr class="call failed">([\s\S]*?)<\/tr>/g)].map((m) => m[1] as string);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(/✗[\s\S]*POST[\s\S]*\/conversations\/987654321\/notes[\s\S]*404[\s\S]*idem-dead-1/);
    // The successful call is not marked; its limiter wait is shown.
    expect(html).toMatch(/<tr class="call">[\s\S]*?GET[\s\S]*?\/conversations\/813[\s\S]*?200[\s\S]*?7 ms/);
    expect((await app.request('/admin/deliveries/evt_nothing_here', { headers })).status).toBe(404);
  });

  it('redirects a job id to its delivery timeline', async () => {
    for (const job of [jobIdFor(DEAD), `${jobIdFor(DEAD)}/note-on-message`]) {
      const res = await app.request(`/admin/deliveries/job/${job}`, { headers });
      expect(res.status, job).toBe(302);
      expect(res.headers.get('location')).toBe(`/admin/deliveries/${encodeURIComponent(DEAD)}`);
      const encoded = await app.request(`/admin/deliveries/job/${encodeURIComponent(job)}`, { headers });
      expect(encoded.headers.get('location'), job).toBe(`/admin/deliveries/${encodeURIComponent(DEAD)}`);
    }
    const form = await app.request(`/admin/deliveries?job=${encodeURIComponent(jobIdFor(DEAD))}`, { headers });
    expect(form.status).toBe(302);
    expect(form.headers.get('location')).toBe(`/admin/deliveries/job/${encodeURIComponent(jobIdFor(DEAD))}`);
    expect((await app.request('/admin/deliveries/job/d/evt_unknown/x', { headers })).status).toBe(404);
  });

  it('escapes shown values', async () => {
    for (const path of [
      '/admin/deliveries',
      `/admin/deliveries/evt_view_hostile`,
      `/admin/deliveries?event=${encodeURIComponent(HOSTILE)}`,
      `/admin/deliveries/${encodeURIComponent(HOSTILE)}`,
    ]) {
      const html = await (await app.request(path, { headers })).text();
      expect(html, path).not.toContain('<script');
      expect(html, path).not.toContain('<b>bold');
    }
    const list = await (await app.request(`/admin/deliveries?event=${encodeURIComponent(HOSTILE)}`, { headers })).text();
    expect(list).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;');
  });

  it('adds a Deliveries link to the board header', async () => {
    const html = await (await app.request('/admin', { headers })).text();
    expect(html).toContain('/admin/deliveries');
  });
});
