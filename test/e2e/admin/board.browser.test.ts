import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import type { Browser } from 'playwright-core';
import { isolatedContext, launchChromium, NO_BROWSER as skip, SCREENSHOTS as OUT } from '../../support/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { EVENTS_QUEUE, HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { listen, type RunningServer } from '../../../src/runtime/http.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

/**
 * The dashboard in a real browser: Debian's chromium driven by playwright-core.
 * `npm test` installs chromium; skipped only with SKIP_BROWSER=1 (counted in the closing line).
 */

const admin = { user: 'operator', password: 'browser-test-pw-71c2' };
const REASON = 'lifecycle stage "X" does not exist';
const JOB_ID = 'evt_browser_1-lifecycle-sync';

describe.skipIf(skip)('dashboard in headless chromium', () => {
  const prefix = uniquePrefix('board');
  let redis: Redis;
  let workerConn: Redis;
  let events: Queue;
  let handlers: Queue;
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    workerConn = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    handlers = new Queue(HANDLERS_QUEUE, { connection: redis, prefix });
    await events.add('delivery', { key: 'evt_browser_1', name: 'contact.lifecycle_changed' }, { jobId: 'evt_browser_1' });
    await handlers.add('lifecycle-sync', { key: 'evt_browser_1', handlerId: 'lifecycle-sync' }, { jobId: JOB_ID, attempts: 3 });

    // A real worker dead-letters it the way Switchyard's runner does (UnrecoverableError: no retry).
    const worker = new Worker(
      HANDLERS_QUEUE,
      async () => {
        throw new UnrecoverableError(REASON);
      },
      { connection: workerConn, prefix },
    );
    const failed = new Promise<void>((resolve) => worker.on('failed', () => resolve()));
    await failed;
    await worker.close();
    expect(await handlers.getJobCounts('failed')).toEqual({ failed: 1 });

    const app = new Hono();
    mountAdmin(app, { queues: [events, handlers], admin });
    server = await listen(app, { host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close(1_000);
    await Promise.allSettled([events?.close(), handlers?.close()]);
    redis?.disconnect();
    workerConn?.disconnect();
  });

  const context = (credentials?: { username: string; password: string }) => isolatedContext(browser, server.url, credentials);

  it('refuses the browser without credentials or with wrong ones', async () => {
    for (const credentials of [undefined, { username: admin.user, password: 'wrong' }]) {
      const ctx = await context(credentials);
      try {
        expect((await ctx.request.get(`${server.url}/admin`)).status()).toBe(401);
        // Headless chromium either shows the 401 page or, with no usable answer to the challenge, fails the navigation.
        const page = await ctx.newPage();
        const outcome = await page.goto(`${server.url}/admin`).then(
          (res) => String(res?.status()),
          (err: Error) => (/ERR_INVALID_AUTH_CREDENTIALS/.test(err.message) ? 'refused' : err.message),
        );
        expect(['401', 'refused']).toContain(outcome);
      } finally {
        await ctx.close();
      }
    }
  });

  it('logs in, sees both queues, opens the failed job and finds its reason', async () => {
    const ctx = await context({ username: admin.user, password: admin.password });
    try {
      const page = await ctx.newPage();
      page.setDefaultTimeout(10_000);
      const res = await page.goto(`${server.url}/admin`);
      expect(res?.status()).toBe(200);
      await expect.poll(() => page.title()).toBe('Switchyard');

      const nav = page.getByRole('navigation');
      await nav.getByRole('link', { name: EVENTS_QUEUE, exact: true }).waitFor();
      await nav.getByRole('link', { name: HANDLERS_QUEUE, exact: true }).waitFor();
      // The overview shows a card per queue, the handlers one with its failed job.
      const main = page.getByRole('main');
      await main.getByText(EVENTS_QUEUE, { exact: true }).waitFor();
      await main.getByText(HANDLERS_QUEUE, { exact: true }).waitFor();
      await page.screenshot({ path: `${OUT}dashboard-overview.png` });

      await nav.getByRole('link', { name: HANDLERS_QUEUE, exact: true }).click();
      await page.waitForURL(/\/admin\/queue\/handlers$/);
      await page
        .getByRole('main')
        .getByRole('link', { name: /^FAILED\b/i })
        .click();
      await page.waitForURL(/status=failed/);

      // The failed list already shows the reason; open the job itself (custom ids are shown without '#').
      await expect.poll(() => page.getByRole('main').innerText()).toContain(REASON);
      await page.getByRole('link', { name: JOB_ID, exact: true }).click();
      await page.waitForURL(new RegExp(`/admin/queue/handlers/${JOB_ID}(\\?|$)`));
      await page.getByRole('heading', { name: HANDLERS_QUEUE }).waitFor();
      const reason = page.getByRole('tabpanel', { name: 'Error' });
      await expect.poll(() => reason.innerText(), { timeout: 10_000 }).toContain(`UnrecoverableError: ${REASON}`);
      await page.screenshot({ path: `${OUT}dashboard.png` });

      // The admin password is never echoed into the page.
      expect(await page.content()).not.toContain(admin.password);
    } finally {
      await ctx.close();
    }
  }, 60_000);
});
