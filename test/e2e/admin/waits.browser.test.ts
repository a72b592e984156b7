import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTrace } from '../../../src/history/read.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';
import { isolatedContext, launchChromium, NO_BROWSER as skip, SCREENSHOTS as OUT } from '../../support/browser.js';
import { conversationBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';

/**
 * Operating parked runs from /admin/waits in Debian's chromium on a real pipeline: Wake… on a run sleeping an
 * hour, confirmed, and the handler writes its note now; Cancel… on a run waiting for a reply, confirmed with a
 * reason, and the delivery's timeline says who cancelled it.
 */
const HANDLERS = fileURLToPath(new URL('../../support/handlers/admin-waits', import.meta.url));
const admin = { user: 'operator', password: 'browser-waits-pw-6a0c' };
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;

describe.skipIf(skip)('Cancel and Wake on the waits page in headless chromium', () => {
  let p: Pipeline;
  let base: string;
  let browser: Browser;
  let conv: number;
  let closedKey: string;

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS, env: { ADMIN_USER: admin.user, ADMIN_PASSWORD: admin.password } });
    base = p.service.receiver?.http.url as string;
    conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    const closed = conversationBody('conversation.closed', conv, null);
    closedKey = keyOf(closed);
    for (const body of [conversationBody('conversation.opened', conv, null), closed])
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    await waitFor(async () => ((await new RunRecords(p.redis, p.prefix).count()) === 2 ? true : null), 20_000, 50);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await p?.close();
  });

  const notes = async () =>
    (await p.requests({ method: 'POST' }))
      .filter((r) => r.path === `/conversations/${conv}/notes` && r.status === 201)
      .map((r) => (r.body as { body: string }).body);
  const row = (page: import('playwright-core').Page, handler: string) => page.locator('table.waits tbody tr', { hasText: handler });

  it('wakes a sleeping run and cancels a waiting one, each after its confirmation', async () => {
    const ctx = await isolatedContext(browser, base, { username: admin.user, password: admin.password });
    try {
      const page = await ctx.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${base}/admin/waits`);
      await expect.poll(() => page.locator('table.waits tbody tr').count()).toBe(2);

      await row(page, 'admin-sleeper').getByRole('button', { name: 'Wake…' }).click();
      await page.getByRole('heading', { name: 'Wake a parked run?' }).waitFor();
      expect(await page.locator('.confirm').innerText()).toContain('The sleep nap ends now');
      expect(await notes()).toEqual([]);
      await page.screenshot({ path: `${OUT}waits-confirm.png`, fullPage: true });
      await page.getByRole('button', { name: 'Wake this run' }).click();
      await page.waitForURL(/\/admin\/waits\?done=woken/);
      expect(await page.locator('p.notice').innerText()).toContain('woken: its sleep ended');
      await waitFor(async () => ((await notes()).includes('admin-sleeper woke') ? true : null), 20_000, 50);

      await row(page, 'admin-waiter').getByRole('button', { name: 'Cancel…' }).click();
      await page.getByRole('heading', { name: 'Cancel a parked run?' }).waitFor();
      await page.locator('input[name="reason"]').fill('the customer was called instead');
      await page.getByRole('button', { name: 'Cancel this run' }).click();
      await page.waitForURL(/\/admin\/waits\?done=cancelled/);
      await page.locator('p.empty', { hasText: 'No run is sleeping or waiting.' }).waitFor();
      await page.screenshot({ path: `${OUT}waits-after.png`, fullPage: true });

      await page.goto(`${base}/admin/deliveries/${encodeURIComponent(closedKey)}`);
      const timeline = page.locator('ol.timeline');
      await expect
        .poll(() => timeline.innerText())
        .toContain(`admin-waiter cancelled in wait reply by ${admin.user} (admin): the customer was called instead; no further step runs`);
      expect((await readTrace(p.redis, p.prefix, closedKey))?.handlers['admin-waiter']).toBe('cancelled');
      expect(await notes()).toEqual(['admin-sleeper woke']);
    } finally {
      await ctx.close();
    }
  }, 90_000);
});
