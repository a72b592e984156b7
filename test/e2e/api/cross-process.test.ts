/**
 * Two processes sharing one token and one Redis never exceed the burst in any
 * 10 s window, asserted from the sandbox's request log (arrival times), not
 * from the clients' own counters.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS, startSandbox, type SandboxHarness } from '../../support/sandbox.js';
import type { RateWorkerOptions, RateWorkerReport } from '../../../bench/lib/rate-worker.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { maxInWindow } from '../../../bench/lib/windows.js';

const WORKER = fileURLToPath(new URL('../../../bench/lib/rate-worker.ts', import.meta.url));
const BURST = 5;
const WINDOW_MS = 10_000;

let h: SandboxHarness;
beforeAll(async () => {
  h = await startSandbox({ burst: BURST });
});
afterAll(async () => {
  await h.close();
});

function runWorker(opts: RateWorkerOptions): Promise<RateWorkerReport> {
  return new Promise((resolve, reject) => {
    const child = fork(WORKER, [JSON.stringify(opts)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let report: RateWorkerReport | undefined;
    child.on('message', (m) => {
      report = m as RateWorkerReport;
    });
    child.on('error', reject);
    child.on('exit', (code) => (report ? resolve(report) : reject(new Error(`worker exited with ${code} and no report`))));
  });
}

describe('rate limit shared across processes', () => {
  it(`two processes, one token, burst ${BURST}: never over the burst in any 10 s window, no 429`, async () => {
    const opts: RateWorkerOptions = {
      baseUrl: h.running.baseUrl,
      token: TOKENS.full,
      redisUrl: testRedisUrl(),
      prefix: `${uniquePrefix('xproc')}:`,
      burst: BURST,
      durationMs: 12_500,
      concurrency: 3,
    };
    const reports = await Promise.all([runWorker(opts), runWorker(opts)]);
    const log = await h.hook<{ time: string; status: number; token: { label: string } | null }[]>('GET', '/requests?path=/me');
    const times = log.map((e) => Date.parse(e.time));

    expect(maxInWindow(times, WINDOW_MS)).toBeLessThanOrEqual(BURST);
    expect(log.filter((e) => e.status === 429)).toHaveLength(0);
    // Both processes got calls through, and together they used the allowance (2 windows).
    expect(reports.every((r) => r.calls > 0)).toBe(true);
    expect(log.length).toBeGreaterThanOrEqual(2 * BURST);
    expect(reports.reduce((n, r) => n + r.status429, 0)).toBe(0);
  }, 40_000);
});

describe('adapting to X-RateLimit-Remaining', () => {
  it('traffic the limiter did not see (another client on the token) is counted from the header: no 429', async () => {
    await h.hook('POST', '/reset');
    const foreign = h.client({ rateLimiter: false, retry: { maxAttempts: 1 } });
    await foreign.me();
    await foreign.me();
    await foreign.me(); // the service has counted 3 of 5
    const { Redis } = await import('ioredis');
    const redis = new Redis(testRedisUrl());
    try {
      const ours = h.client({ redis, burst: BURST, rateLimitPrefix: `${uniquePrefix('adapt')}:`, retry: { maxAttempts: 1 } });
      const started = Date.now();
      for (let i = 0; i < 3; i++) await ours.me(); // 1st answer says 1 remaining: the 3rd call waits for the next window
      expect(Date.now() - started).toBeGreaterThanOrEqual(8_000);
      const log = await h.hook<{ status: number }[]>('GET', '/requests?path=/me');
      expect(log.filter((e) => e.status === 429)).toHaveLength(0);
    } finally {
      await redis.quit();
    }
  }, 30_000);
});
