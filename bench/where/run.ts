// bench/where/run.ts: `switchyard deliveries --where` over a large history of kept bodies.
//
//   node --import tsx bench/where/run.ts        (from the repository root; knobs: DELIVERIES=100000 ROUNDS=3 SKIP_BUILD=1)
//
// A fresh redis-server; N realistic deliveries (bench/where/fill.ts) written by the real HistoryWriter with their
// bodies kept, received over the last 6 days; three of them, among the 1 000 oldest, carry a marker text in their
// message. Then the built CLI (`node bin/switchyard.js deliveries …`, as a user runs it) is timed with
// /usr/bin/time (wall seconds, peak RSS) for each query, ROUNDS times; the median is reported:
//   end      the marker (`data.body~<marker>`): matches near the end of the scan, so every delivery is read
//   none     a text no message holds (`data.body~…`): every message's body read and matched, nothing found
//   all      `data.id=-1`: a field of every event but one, so nearly every body is read
//   email    `--event contact.created --where data.email=…`: the summary filter first, a tenth of the bodies
//   newest   `data.id!=-1 --limit 1`: the newest delivery matches, the scan stops after its first page
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { BIN, build, log, machine, runBench, startRedis } from '../lib/proc.js';
import { fillHistory } from './fill.js';

const N = Number(process.env.DELIVERIES ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PREFIX = 'switchyard';
const MARKER = 'marker-7f3a9c';
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-where-'));

interface Run {
  seconds: number;
  /** CPU seconds of the CLI process (user + system) and of redis-server during the run. */
  cliCpu: number;
  redisCpu: number;
  rssMb: number;
  rows: number;
  scanned: number;
  withoutBody: number;
}

/** redis-server's CPU seconds so far (INFO cpu). */
async function redisCpu(r: Redis): Promise<number> {
  const info = await r.info('cpu');
  const f = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return f('used_cpu_sys') + f('used_cpu_user');
}

/** One CLI run, timed by /usr/bin/time: wall seconds, CPU seconds and peak RSS (KB → MB), with what the --json output says. */
async function query(r: Redis, url: string, args: string[]): Promise<Run> {
  const before = await redisCpu(r);
  const res = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', 'node', BIN, 'deliveries', ...args, '--json'], {
    env: { ...process.env, REDIS_URL: url, QUEUE_PREFIX: PREFIX, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const redis = Math.round(((await redisCpu(r)) - before) * 100) / 100;
  if (res.status !== 0) throw new Error(`deliveries ${args.join(' ')} exited ${res.status}: ${res.stderr}`);
  const [seconds, user, sys, kb] = (res.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  const out = JSON.parse(res.stdout) as { deliveries: unknown[]; scanned: number; withoutBody: number };
  return {
    seconds: seconds ?? NaN,
    cliCpu: Math.round(((user ?? 0) + (sys ?? 0)) * 100) / 100,
    redisCpu: redis,
    rssMb: Math.round((kb ?? 0) / 102.4) / 10,
    rows: out.deliveries.length,
    scanned: out.scanned,
    withoutBody: out.withoutBody,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  build();
  const redis = await startRedis(scratch);
  const r = new Redis(redis.url, { maxRetriesPerRequest: null });
  try {
    const now = Date.now();
    const t0 = Date.now();
    const marked = new Set([10, 500, 900]);
    const { bodyBytes } = await fillHistory(r, {
      prefix: PREFIX,
      n: N,
      keepBodiesMs: 7 * 86_400_000,
      fromMs: now - 6 * 86_400_000,
      toMs: now - 60_000,
      marker: (i) => (marked.has(i) ? MARKER : undefined),
    });
    log(`filled ${N} deliveries (${Math.round(bodyBytes / N)} B bodies) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const cases: Record<string, string[]> = {
      end: ['--where', `data.body~${MARKER}`],
      none: ['--where', 'data.body~zzqx-no-such-text'],
      all: ['--where', 'data.id=-1'],
      email: ['--event', 'contact.created', '--where', 'data.email=nobody@example.invalid'],
      newest: ['--where', 'data.id!=-1', '--limit', '1'],
    };
    const results: Record<string, Run & { rounds: number[] }> = {};
    for (const [name, args] of Object.entries(cases)) {
      const runs: Run[] = [];
      for (let i = 0; i < ROUNDS; i++) runs.push(await query(r, redis.url, args));
      const m = runs.find((x) => x.seconds === median(runs.map((y) => y.seconds))) as Run;
      results[name] = { ...m, rssMb: Math.max(...runs.map((x) => x.rssMb)), rounds: runs.map((x) => x.seconds) };
      log(`${name}: ${JSON.stringify(results[name])}`);
    }
    const load = spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.trim();
    const result = { date: new Date().toISOString(), machine: machine(), load, deliveries: N, results };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    r.disconnect();
  }
}

void runBench(main, [scratch]);
