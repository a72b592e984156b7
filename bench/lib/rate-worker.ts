/**
 * Child process of the api-rate benchmark (bench/api-rate/run.ts) and the
 * cross-process rate-limit test (test/e2e/api/cross-process.test.ts):
 * one API client (own Redis connection, shared token, so shared limiter keys)
 * calling `GET /me` from `concurrency` loops until `durationMs` has passed,
 * then reporting its counts over IPC.
 * Run as `node --import tsx rate-worker.ts '<json options>'` (fork with IPC).
 */
import { Redis } from 'ioredis';
import { createApiClient, type CallEvent } from '../../src/api/index.js';

export interface RateWorkerOptions {
  baseUrl: string;
  token: string;
  redisUrl: string;
  prefix: string;
  burst: number;
  durationMs: number;
  concurrency: number;
}

export interface RateWorkerReport {
  pid: number;
  calls: number;
  status429: number;
  failures: number;
  maxWaitMs: number;
  totalWaitMs: number;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as RateWorkerOptions;
const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: 2 });
const report: RateWorkerReport = { pid: process.pid, calls: 0, status429: 0, failures: 0, maxWaitMs: 0, totalWaitMs: 0 };
const api = createApiClient({
  baseUrl: opts.baseUrl,
  token: opts.token,
  redis,
  burst: opts.burst,
  rateLimitPrefix: opts.prefix,
  retry: { maxAttempts: 1, baseMs: 100, maxMs: 10_000 },
  onCall: (e: CallEvent) => {
    if (e.status === 429) report.status429 += 1;
    report.maxWaitMs = Math.max(report.maxWaitMs, e.rateLimitWaitMs);
    report.totalWaitMs += e.rateLimitWaitMs;
  },
});

const stop = AbortSignal.timeout(opts.durationMs);
async function loop(): Promise<void> {
  while (!stop.aborted) {
    try {
      await api.me({ signal: stop });
      report.calls += 1;
    } catch {
      if (!stop.aborted) report.failures += 1;
    }
  }
}

await Promise.all(Array.from({ length: opts.concurrency }, loop));
await redis.quit();
process.send?.(report);
process.disconnect?.();
