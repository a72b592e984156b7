/**
 * api-rate benchmark: N worker processes share one token and one Redis against
 * the sandbox; the sandbox's request log (arrival times) is the ground truth.
 *
 *   node --import tsx bench/api-rate/run.ts [--burst 30] [--duration 60] [--workers 4] [--concurrency 4]
 *
 * Prints a JSON summary: calls per 10 s window (fixed windows from the first
 * call, and the worst sliding window), 429s, and the ratio to the allowed rate.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startManagedRedis } from '../../src/redis/managed.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { DEFAULT_TOKEN_VALUES } from '../../src/sandbox/tokens.js';
import type { RateWorkerOptions, RateWorkerReport } from '../lib/rate-worker.js';
import { maxInWindow } from '../lib/windows.js';

const WINDOW_MS = 10_000;
const { values } = parseArgs({
  options: {
    burst: { type: 'string', default: '30' },
    duration: { type: 'string', default: '60' },
    workers: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '4' },
  },
});
const burst = Number(values.burst);
const durationMs = Number(values.duration) * 1000;
const workers = Number(values.workers);
const concurrency = Number(values.concurrency);

function runWorker(opts: RateWorkerOptions): Promise<RateWorkerReport> {
  const script = fileURLToPath(new URL('../lib/rate-worker.ts', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = fork(script, [JSON.stringify(opts)], { execArgv: ['--import', 'tsx'] });
    let report: RateWorkerReport | undefined;
    child.on('message', (m) => {
      report = m as RateWorkerReport;
    });
    child.on('error', reject);
    child.on('exit', (code) => (report ? resolve(report) : reject(new Error(`worker exited ${code}`))));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'bench-api-rate-'));
const redis = await startManagedRedis({ dir });
const sandbox = createSandbox({ burst });
const running = await sandbox.listen(0);
try {
  const opts: RateWorkerOptions = {
    baseUrl: running.baseUrl,
    token: DEFAULT_TOKEN_VALUES.full,
    redisUrl: redis.url,
    prefix: `bench-${Date.now()}:`,
    burst,
    durationMs,
    concurrency,
  };
  const started = Date.now();
  const reports = await Promise.all(Array.from({ length: workers }, () => runWorker(opts)));
  const elapsedMs = Date.now() - started;

  const log = sandbox.state.log.list({ path: '/me' });
  const times = log.map((e) => Date.parse(e.time)).sort((a, b) => a - b);
  const first = times[0] ?? started;
  // Fixed windows from the first call; only windows wholly inside the run count for the mean.
  const full = Math.floor(durationMs / WINDOW_MS);
  const perWindow = Array.from(
    { length: full },
    (_, w) => times.filter((t) => t >= first + w * WINDOW_MS && t < first + (w + 1) * WINDOW_MS).length,
  );
  const mean = perWindow.reduce((a, b) => a + b, 0) / Math.max(1, perWindow.length);
  const summary = {
    date: new Date().toISOString(),
    machine: `${cpus().length} cores, Node ${process.version}`,
    burst,
    durationS: durationMs / 1000,
    workers,
    concurrencyPerWorker: concurrency,
    elapsedMs,
    callsLogged: times.length,
    status429InLog: log.filter((e) => e.status === 429).length,
    status429SeenByClients: reports.reduce((n, r) => n + r.status429, 0),
    failures: reports.reduce((n, r) => n + r.failures, 0),
    perWindow,
    maxFixedWindow: Math.max(...perWindow),
    maxSlidingWindow: maxInWindow(times, WINDOW_MS),
    meanPerWindow: Number(mean.toFixed(2)),
    ratioToAllowed: Number((mean / burst).toFixed(4)),
    perWorkerCalls: reports.map((r) => r.calls),
  };
  console.log(JSON.stringify(summary, null, 2));
} finally {
  await running.close();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}
