/**
 * One benchmark worker process: an API client with its own Redis connection,
 * sharing the token (and so the limiter keys) with the other workers, calling
 * `GET /me` from `concurrency` loops until `durationMs` passes. Reports its
 * counts over IPC. Started by run.ts with `node --import tsx`.
 */
import { Redis } from 'ioredis';
import { createApiClient } from '../../src/api/index.js';

interface WorkerOptions {
  baseUrl: string;
  token: string;
  redisUrl: string;
  prefix: string;
  burst: number;
  durationMs: number;
  concurrency: number;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as WorkerOptions;
const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: 2 });
const report = { pid: process.pid, calls: 0, status429: 0, failures: 0, totalWaitMs: 0 };
const api = createApiClient({
  baseUrl: opts.baseUrl,
  token: opts.token,
  redis,
  burst: opts.burst,
  rateLimitPrefix: opts.prefix,
  retry: { maxAttempts: 1, baseMs: 100, maxMs: 10_000 },
  onCall: (e) => {
    if (e.status === 429) report.status429 += 1;
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
