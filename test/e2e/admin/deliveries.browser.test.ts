import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { messageBody } from '../../support/events.js';
import { isolatedContext, launchChromium, NO_BROWSER as skip, SCREENSHOTS as OUT } from '../../support/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTrace } from '../../../src/history/read.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';

/**
 * The deliveries view beside the board, in Debian's chromium driven by
 * playwright-core, on a real pipeline (receiver + worker + sandbox API):
 * a run dead-lettered on a 404 is found in the list and its timeline shows
 * the failing call. Skipped only on a developer machine without chromium.
 */
const HANDLERS = fileURLToPath(new URL('../../support/handlers/history', import.meta.url));

const admin = { user: 'operator', password: 'browser-deliveries-pw-4e1a' };

function message(conv: number, text: string): string {
  return messageBody('message.received', conv, text);
}
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;

describe.skipIf(skip)('deliveries view in headless chromium', () => {
  let p: Pipeline;
  let base: string;
  let browser: Browser;
  let okKey: string;
  let deadKey: string;

  beforeAll(async () => {
    p = await startPipeline({
      handlersDir: HANDLERS,
      only: ['traced-note'],
      env: { ADMIN_USER: admin.user, ADMIN_PASSWORD: admin.password },
    });
    base = p.service.receiver?.http.url as string;
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    const ok = message(conv, 'plain');
    const dead = message(conv, 'dead-me');
    okKey = keyOf(ok);
    deadKey = keyOf(dead);
    expect((await deliver(p.receiverUrl, ok)).status).toBe(202);
    expect((await deliver(p.receiverUrl, dead)).status).toBe(202);
    await waitFor(
      async () => ((await readTrace(p.redis, p.prefix, okKey))?.handlers['traced-note'] === 'completed' ? true : null),
      20_000,
      50,
    );
    await waitFor(
      async () => ((await readTrace(p.redis, p.prefix, deadKey))?.handlers['traced-note'] === 'dead' ? true : null),
      20_000,
      50,
    );
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await p?.close();
  });

  const context = (credentials?: { username: string; password: string }) => isolatedContext(browser, base, credentials);

  it('refuses the browser without credentials', async () => {
    const ctx = await context();
    try {
      expect((await ctx.request.get(`${base}/admin/deliveries`)).status()).toBe(401);
    } finally {
      await ctx.close();
    }
  });

  it('lists, filters by outcome, opens the dead-lettered run and finds its failing call', async () => {
    const ctx = await context({ username: admin.user, password: admin.password });
    try {
      const page = await ctx.newPage();
      page.setDefaultTimeout(10_000);
      expect((await page.goto(`${base}/admin/deliveries`))?.status()).toBe(200);
      const rows = page.locator('table.deliveries tbody tr');
      await page.getByRole('link', { name: deadKey, exact: true }).waitFor();
      await page.getByRole('link', { name: okKey, exact: true }).waitFor();
      // Newest first: the dead one was delivered last.
      await expect.poll(() => rows.first().innerText()).toContain(deadKey);

      await page.locator('select[name="outcome"]').selectOption('dead');
      await page.locator('input[name="handler"]').fill('traced-note');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/outcome=dead/);
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.first().innerText()).toContain(deadKey);
      await page.screenshot({ path: `${OUT}deliveries-list.png`, fullPage: true });

      await page.getByRole('link', { name: deadKey, exact: true }).click();
      await page.waitForURL(new RegExp(`/admin/deliveries/${encodeURIComponent(deadKey)}$`));
      await page.getByRole('heading', { name: `Delivery ${deadKey}` }).waitFor();
      const timeline = page.locator('ol.timeline');
      for (const s of ['received', 'queued (events)', 'fan-out: traced-note', 'dead (dead-lettered)', 'NotFoundError']) {
        await expect.poll(() => timeline.innerText()).toContain(s);
      }
      const failing = page.locator('tr.call.failed');
      await expect.poll(() => failing.count()).toBe(1);
      const text = await failing.innerText();
      expect(text).toContain('✗');
      expect(text).toContain('POST');
      expect(text).toContain('/conversations/987654321/notes');
      expect(text).toContain('404');
      await page.screenshot({ path: `${OUT}deliveries-timeline.png`, fullPage: true });
      expect(await page.content()).not.toContain(admin.password);

      // A job id as the board shows it opens the same timeline.
      await page.goto(`${base}/admin/deliveries/job/d/${deadKey}/traced-note`);
      await page.waitForURL(new RegExp(`/admin/deliveries/${encodeURIComponent(deadKey)}$`));
    } finally {
      await ctx.close();
    }
  }, 60_000);

  it('the board header links to the deliveries view', async () => {
    const ctx = await context({ username: admin.user, password: admin.password });
    try {
      const page = await ctx.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${base}/admin`);
      // bull-board puts uiConfig.miscLinks in a menu at the end of its header.
      await page.locator('header button[aria-haspopup="menu"]').click();
      const link = page.getByRole('menuitem', { name: 'Deliveries' }).or(page.getByRole('link', { name: 'Deliveries' }));
      await link.first().waitFor();
      await link.first().click();
      await page.waitForURL(/\/admin\/deliveries$/);
      await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    } finally {
      await ctx.close();
    }
  }, 60_000);
});
