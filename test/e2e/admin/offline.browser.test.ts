import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { HistoryWriter } from '../../../src/history/writer.js';
import { createLogger } from '../../../src/log/logger.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { listen, type RunningServer } from '../../../src/runtime/http.js';
import { launchChromium, NO_BROWSER as skip } from '../../support/browser.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { waitFor } from '../../support/wait.js';

/**
 * The dashboard works offline: no page we serve makes the browser request any
 * host but its own (bull-board's page linked Google Fonts: a privacy leak, and
 * a broken page on an air-gapped network). Every request of every page is
 * recorded, none is blocked, and any to another origin fails the test.
 */
const admin = { user: 'operator', password: 'offline-test-pw-5d1e' };
const KEY = 'evt_offline_1';

describe.skipIf(skip)('admin pages request nothing from other hosts (headless chromium)', () => {
  const prefix = uniquePrefix('offline');
  let redis: Redis;
  let events: Queue;
  let handlers: Queue;
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    handlers = new Queue(HANDLERS_QUEUE, { connection: redis, prefix });
    await handlers.add('notes', { key: KEY, handlerId: 'notes', event: { name: 'lead.won' } }, { jobId: `d/${KEY}/notes` });
    const worker = new Worker(
      HANDLERS_QUEUE,
      async () => {
        throw new UnrecoverableError('offline test');
      },
      { connection: redis.duplicate(), prefix },
    );
    await waitFor(async () => (await handlers.getFailedCount()) === 1);
    await worker.close();
    const writer = new HistoryWriter(redis, { prefix, ttlMs: 3_600_000 }, createLogger({ level: 'silent' }));
    writer.fannedOut(
      KEY,
      { receivedAt: new Date().toISOString(), queuedAt: Date.now(), secretIndex: 0, bytes: 10, source: 'webhook' },
      { event: 'lead.won', conversation: null, contact: null, handlers: [{ id: 'notes', placement: 'queued', priority: 'normal' }] },
    );
    writer.flush();
    const app = new Hono();
    mountAdmin(app, { queues: [events, handlers], admin, history: { redis, prefix } });
    server = await listen(app, { host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close(1_000);
    await Promise.allSettled([events?.close(), handlers?.close()]);
    redis?.disconnect();
  });

  const PAGES = [
    '/admin',
    `/admin/queue/${HANDLERS_QUEUE}?status=failed`,
    '/admin/deliveries',
    `/admin/deliveries/${KEY}`,
    `/admin/deliveries/job/d/${KEY}/notes`,
    '/admin/waits',
    '/admin/reruns',
  ];

  it.each(PAGES)('%s loads with requests to its own origin only', async (path) => {
    const ctx = await browser.newContext({ httpCredentials: { username: admin.user, password: admin.password } });
    const own = new URL(server.url).origin;
    const requests: string[] = [];
    const record = (r: Request) => requests.push(r.url());
    ctx.on('request', record);
    try {
      const page = await ctx.newPage();
      // The policy the pages carry must not break them: no load refused by it.
      const refused: string[] = [];
      page.on('console', (m) => {
        if (/Content.Security.Policy/i.test(m.text())) refused.push(m.text());
      });
      expect((await page.goto(`${server.url}${path}`, { waitUntil: 'networkidle' }))?.status()).toBe(200);
      // Web fonts are requested once the page's text is laid out: wait until every font face settled.
      await expect.poll(() => page.evaluate<string>('document.fonts.status')).toBe('loaded');
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.filter((u) => !u.startsWith('data:') && new URL(u).origin !== own)).toEqual([]);
      expect(refused).toEqual([]);
    } finally {
      await ctx.close();
    }
  });
});
