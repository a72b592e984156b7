import { mkdirSync } from 'node:fs';
import { requireTool, skipTool } from './tools.js';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Debian's chromium (`npm test` installs it). Browser tests are skipped only with SKIP_BROWSER=1 (counted and named). */
export const CHROMIUM = '/usr/bin/chromium';
export const NO_BROWSER = skipTool('chromium');
/** Where browser tests save their screenshots. */
export const SCREENSHOTS = fileURLToPath(new URL('../../test-results/', import.meta.url));

/** Headless chromium with the flags this machine needs; the screenshot folder exists afterwards. */
export async function launchChromium(): Promise<Browser> {
  requireTool('chromium');
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** A context that talks to `base` only (anything else, e.g. a web font, is aborted: nothing leaves the machine). */
export async function isolatedContext(
  browser: Browser,
  base: string,
  credentials?: { username: string; password: string },
): Promise<BrowserContext> {
  const ctx = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    ...(credentials ? { httpCredentials: credentials } : {}),
  });
  await ctx.route('**/*', (route) => (route.request().url().startsWith(`${base}/`) ? route.continue() : route.abort()));
  return ctx;
}
