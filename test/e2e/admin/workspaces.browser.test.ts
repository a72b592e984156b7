import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedContext, launchChromium, NO_BROWSER as skip, SCREENSHOTS as OUT } from '../../support/browser.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { waitFor } from '../../support/service.js';
import { startTwoWorkspaces, type TwoWorkspaces } from '../../support/workspaces.js';

const admin = { user: 'operator', password: 'browser-ws-pw-93d1' };
const basic = `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}`;

/**
 * The dashboard of a deployment of two workspaces in Debian's chromium: the deliveries page asks which
 * workspace, shows only that workspace's deliveries, and switches to the other; the board names each
 * workspace's queues.
 */
describe.skipIf(skip)("a deployment of two workspaces' dashboard in headless chromium", () => {
  let w: TwoWorkspaces;
  let browser: Browser;
  let acmeKey: string;
  let otherKey: string;

  beforeAll(async () => {
    w = await startTwoWorkspaces({ ADMIN_USER: admin.user, ADMIN_PASSWORD: admin.password });
    const a = messageBody('message.received', 7_201, 'browser acme');
    const b = messageBody('message.received', 7_202, 'browser other');
    [acmeKey, otherKey] = [deliveryId(a), deliveryId(b)];
    expect((await w.deliver('acme', a)).status).toBe(202);
    expect((await w.deliver('other', b)).status).toBe(202);
    const listed = async (ws: string, key: string) =>
      (await (await fetch(`${w.base}/admin/w/${ws}/deliveries`, { headers: { Authorization: basic } })).text()).includes(key);
    await waitFor(() => listed('acme', acmeKey), 15_000);
    await waitFor(() => listed('other', otherKey), 15_000);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await w?.close();
  });

  it('chooses a workspace, lists only its deliveries, and switches to the other', async () => {
    const ctx = await isolatedContext(browser, w.base, { username: admin.user, password: admin.password });
    try {
      const page = await ctx.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${w.base}/admin/deliveries`);
      await page.getByRole('heading', { name: 'Choose a workspace' }).waitFor();
      await page.getByRole('link', { name: 'acme', exact: true }).click();
      await page.waitForURL(/\/admin\/w\/acme\/deliveries$/);
      const table = page.locator('table.deliveries');
      await expect.poll(() => table.innerText()).toContain(acmeKey);
      expect(await table.innerText()).not.toContain(otherKey);
      expect(await page.locator('header').innerText()).toContain('workspace acme');
      await page.screenshot({ path: `${OUT}dashboard-workspace.png` });

      await page.getByRole('link', { name: 'other workspaces' }).click();
      await page.getByRole('link', { name: 'other', exact: true }).click();
      await page.waitForURL(/\/admin\/w\/other\/deliveries$/);
      await expect.poll(() => table.innerText()).toContain(otherKey);
      expect(await table.innerText()).not.toContain(acmeKey);
    } finally {
      await ctx.close();
    }
  });

  it("names each workspace's queues on the board", async () => {
    const ctx = await isolatedContext(browser, w.base, { username: admin.user, password: admin.password });
    try {
      const page = await ctx.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${w.base}/admin`);
      const main = page.getByRole('main');
      await main.getByText('acme · events', { exact: true }).waitFor();
      await main.getByText('other · events', { exact: true }).waitFor();
      await page.screenshot({ path: `${OUT}dashboard-workspaces-board.png` });
    } finally {
      await ctx.close();
    }
  });
});
