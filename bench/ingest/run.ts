// bench/ingest: Switchyard's ingest path against a bare Hono route.
//
//   node --import tsx bench/ingest/run.ts          (from the repository root)
//
// In one run, at 50 and at 10 keep-alive connections on loopback:
//   (a) a bare Hono route on @hono/node-server answering 200 — the ceiling;
//   (b) `switchyard serve` (signature verify + dedupe + durable enqueue) on a
//       redis-server started here with AOF `appendfsync everysec`, and
//   (c) the same with `appendfsync always`, and
//   (d) reference designs (bench/ingest/reference-server.mjs): the floor (read,
//       verify, parse the envelope, one LPUSH of the body: the least a verifying,
//       durable route does, without dedupe), a raw LPUSH and a plain
//       `await queue.add()` per request. Switchyard's target is its ratio to the
//       floor (>= 0.85x at 50 connections, p99 <= 25 ms).
// Every request carries a distinct, signed ~500-byte `message.received`
// envelope. Server, Redis and load generator are separate processes. The
// receiver runs no ingest pump (INGEST_PUMP=auto); after each Switchyard case
// it is stopped gracefully, the workers' IngestPump (in-process, no
// dispatcher) drains the inbox into the `events` queue, and every 202 is
// checked to have become exactly one `events` job.
//
// Environment knobs (all optional):
//   CONNECTIONS=50,10   WARMUP=3   DURATION=10   FSYNC=everysec,always
//   REFERENCE=floor,lpush,queue-add  reference designs (the floor, raw LPUSH,
//                       plain queue.add()) on this harness; REFERENCE= skips them;
//                       read,verify,verify-parse add steps of Switchyard's own
//                       path without Redis (bench/ingest/reference-server.mjs)
//   SKIP_BUILD=1        skip `npm run build` (dist/ must exist)
//   PROFILE=<dir>       run the receiver (and the reference servers) with `node --cpu-prof` and write the
//                       profiles into <dir>; summarise with
//                       `node bench/ingest/top-self.mjs <file.cpuprofile>`
//   RESULTS=<file>      also write the raw results as JSON
//   SWITCHYARD_LOG_LEVEL=info  the receiver's LOG_LEVEL (default warn: the
//                       per-delivery info line is then not written; `info`
//                       measures it, written to a pipe this script drains)
//   SWITCHYARD_BIN=<path>  CLI to benchmark instead of bin/switchyard.js
//                       (A/B-test a patched build without touching this tree)
//   ROUNDS=1            run the reference and Switchyard cases this many times,
//                       interleaved; the summary gives each case's best and median
//                       req/s and their ratios to the floor's (a shared machine's
//                       foreign load hits single runs: compare rounds, not cases)
//   COMPARE_BIN=<path>[,<path>...]  other builds' bin/switchyard.js, run beside
//                       each Switchyard case on the same settings ("switchyard B",
//                       "switchyard C" ... rows), so an A/B sees the same machine
//                       state; with ROUNDS each round starts one case later
//   HISTORY=on          the receiver's HISTORY setting; `on,off` runs each
//                       Switchyard case with both, one right after the other
//                       ("HISTORY=off" rows): what delivery history costs ingest
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { decodeInboxItem } from '../../src/queue/inbox-item.js';
import { IngestPump } from '../../src/queue/pump.js';
import {
  BIN,
  build,
  cpuSeconds,
  freePort,
  httpOk,
  log,
  machine,
  machineBusy,
  start,
  startRedis as startRedisServer,
  stop,
  runBench,
  until,
} from '../lib/proc.js';

const HERE = import.meta.dirname;
const CONNECTIONS = (process.env.CONNECTIONS ?? '50,10').split(',').map(Number);
const WARMUP = Number(process.env.WARMUP ?? 3);
const DURATION = Number(process.env.DURATION ?? 10);
const FSYNC = (process.env.FSYNC ?? 'everysec,always').split(',').filter(Boolean);
const REFERENCE = (process.env.REFERENCE ?? 'floor,lpush,queue-add').split(',').filter(Boolean);
const REFERENCE_NAMES: Record<string, string> = {
  floor: 'floor (read + verify + parse + LPUSH)',
  lpush: 'raw LPUSH',
  'queue-add': 'plain queue.add()',
  read: 'read body only',
  verify: 'read + verify',
  'verify-parse': 'read + verify + parse',
};
const ROUNDS = Math.max(1, Number(process.env.ROUNDS ?? 1));
const COMPARE_BINS = (process.env.COMPARE_BIN ?? '')
  .split(',')
  .filter(Boolean)
  .map((p) => resolve(p));
const PROFILE = process.env.PROFILE ? resolve(process.env.PROFILE) : undefined;
const HISTORY = (process.env.HISTORY ?? 'on').split(',').filter(Boolean);
const SECRET = 'bench-secret';
const PREFIX = 'bench';

const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));

/** A fresh redis-server with the given `appendfsync` (the shared helper's defaults otherwise). */
function startRedis(fsync: string) {
  return startRedisServer(scratch, ['--appendfsync', fsync]);
}

async function startBare(): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = start('node', [join(HERE, 'bare-server.mjs')], { env: { PORT: String(port) }, name: 'bare' });
  await until('bare server', async () => {
    const r = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', body: '{}' });
    await r.arrayBuffer();
    return r.status === 200;
  });
  return { port, child };
}

async function startReference(mode: string, redisPort: number, tag = ''): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const profile = `ref-${mode}${tag.replace(' #', '-r')}.cpuprofile`;
  const nodeFlags = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`, `--cpu-prof-name=${profile}`] : [];
  const child = start('node', [...nodeFlags, join(HERE, 'reference-server.mjs')], {
    env: { PORT: String(port), REDIS_PORT: String(redisPort), MODE: mode },
    name: `ref-${mode}`,
  });
  await until(`reference server (${mode})`, async () => {
    const r = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', body: '{}' });
    await r.arrayBuffer();
    return r.status === 202 || r.status === 401; // the verify modes refuse the unsigned probe
  });
  return { port, child };
}

async function startSwitchyard(
  redisPort: number,
  profileName?: string,
  bin = BIN,
  history = 'on',
): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const nodeFlags = PROFILE && profileName ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`, `--cpu-prof-name=${profileName}.cpuprofile`] : [];
  // Log lines (JSON on stdout) are drained and discarded, never left to fill the pipe.
  const child = start('node', [...nodeFlags, bin, 'serve'], {
    name: 'switchyard',
    env: {
      WEBHOOK_SECRETS: SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      LOG_LEVEL: process.env.SWITCHYARD_LOG_LEVEL ?? 'warn',
      QUEUE_PREFIX: PREFIX,
      HISTORY: history,
    },
  });
  await until('switchyard /readyz', () => httpOk(`http://127.0.0.1:${port}/readyz`));
  return { port, child };
}

interface LoadResult {
  connections: number;
  measured: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  statusMeasured: Record<string, number>;
  statusAll: Record<string, number>;
  totalResponses: number;
  socketErrors: number;
  sent: number;
  cpuSec: number;
  cpuUsPerReq?: Record<string, number>;
  foreignCores?: number;
}

/** Runs the load generator while accounting the CPU time of `watched` processes (µs per response). */
async function runLoadWatched(
  watched: Record<string, ChildProcess>,
  ...args: Parameters<typeof runLoad>
): Promise<LoadResult & { cpuUsPerReq: Record<string, number>; foreignCores: number }> {
  const before = Object.fromEntries(Object.entries(watched).map(([k, c]) => [k, cpuSeconds(c.pid)]));
  const m0 = machineBusy();
  const t0 = performance.now();
  const load = await runLoad(...args);
  const wall = (performance.now() - t0) / 1000;
  const m1 = machineBusy();
  const used = Object.fromEntries(Object.entries(watched).map(([k, c]) => [k, cpuSeconds(c.pid) - (before[k] as number)]));
  const cpuUsPerReq = Object.fromEntries(Object.entries(used).map(([k, s]) => [k, (s * 1e6) / load.totalResponses]));
  cpuUsPerReq.loadgen = (load.cpuSec * 1e6) / load.totalResponses;
  // Cores busy with anything else on the machine (other users' processes) during this case.
  const ours = Object.values(used).reduce((a, b) => a + b, 0) + load.cpuSec;
  const foreignCores = (m1 - m0 - ours) / wall;
  return { ...load, cpuUsPerReq, foreignCores };
}

function runLoad(port: number, connections: number, runId: string, acceptedIdsFile?: string): Promise<LoadResult> {
  const opts = {
    host: '127.0.0.1',
    port,
    path: '/webhooks',
    connections,
    warmupSec: WARMUP,
    durationSec: DURATION,
    secret: SECRET,
    header: 'X-Service-Signature',
    runId,
    acceptedIdsFile,
  };
  return new Promise((res, rej) => {
    const child = start('node', [join(HERE, 'loadgen.mjs'), JSON.stringify(opts)], { name: 'loadgen', keepStdout: true });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.once('exit', (code) => {
      if (code !== 0) return rej(new Error(`load generator exited with ${code}`));
      try {
        res(JSON.parse(out) as LoadResult);
      } catch (err) {
        rej(err);
      }
    });
  });
}

interface Verification {
  accepted: number;
  jobs: number;
  inbox: number;
  inflight: number;
  missing: number;
  backlogAtEnd: number;
  ok: boolean;
}

/** Job id as the pump derives it from a delivery key (src/events/envelope.ts jobIdFor). */
const jobIdFor = (key: string) => `d/${key.replace(/%/g, '%25').replace(/:/g, '%3A').replace(/\//g, '%2F')}`;

async function verify(redis: Redis, acceptedIdsFile: string, backlogAtEnd: number): Promise<Verification> {
  const ids = readFileSync(acceptedIdsFile, 'utf8').split('\n').filter(Boolean);
  const queue = new Queue('events', { connection: redis, prefix: PREFIX });
  const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed');
  const jobs = Object.values(counts).reduce((a, b) => a + b, 0);
  const inbox = await redis.llen(`${PREFIX}:ingest:inbox`);
  let inflight = 0;
  for (const k of await redis.keys(`${PREFIX}:ingest:inflight:*`)) inflight += await redis.llen(k);
  // Every accepted id is a job or still waits in the inbox / an in-flight list.
  const queued = new Set<string>();
  for (const list of [`${PREFIX}:ingest:inbox`, ...(await redis.keys(`${PREFIX}:ingest:inflight:*`))]) {
    for (const raw of await redis.lrange(list, 0, -1)) queued.add(decodeInboxItem(raw).key);
  }
  let missing = 0;
  for (let i = 0; i < ids.length; i += 1000) {
    const slice = ids.slice(i, i + 1000);
    const p = redis.pipeline();
    for (const id of slice) p.exists(`${PREFIX}:events:${jobIdFor(id)}`);
    const res = (await p.exec()) ?? [];
    res.forEach(([, v], j) => {
      if (v !== 1 && !queued.has(slice[j] as string)) missing++;
    });
  }
  const ok = missing === 0 && new Set(ids).size === ids.length && jobs + inbox + inflight === ids.length;
  return { accepted: ids.length, jobs, inbox, inflight, missing, backlogAtEnd, ok };
}

/**
 * The receiver runs no ingest pump (INGEST_PUMP=auto: the pump runs where a
 * worker runs), so after the load the same IngestPump a worker runs moves the
 * inbox into the `events` queue, here in-process and without a dispatcher: the
 * jobs then stay waiting, so every 202 can be matched to its job (a worker
 * would complete them, and completed jobs past 20 000 are trimmed). It stops
 * once the inbox and every in-flight list are empty (bounded wait).
 */
async function drainWithPump(redisPort: number, redis: Redis): Promise<void> {
  const connection = () => new Redis({ port: redisPort, host: '127.0.0.1', maxRetriesPerRequest: null });
  const commands = connection();
  const blocking = connection();
  const events = new Queue('events', { connection: commands, prefix: PREFIX });
  const pump = new IngestPump({ redis: commands, blocking, events, prefix: PREFIX, log: pino({ level: 'warn' }) });
  pump.start();
  try {
    await until(
      'the inbox to drain',
      async () => {
        let n = await redis.llen(`${PREFIX}:ingest:inbox`);
        for (const k of await redis.keys(`${PREFIX}:ingest:inflight:*`)) n += await redis.llen(k);
        return n === 0;
      },
      300_000,
    );
  } finally {
    await pump.stop();
    await events.close();
    commands.disconnect();
  }
}

interface Row {
  name: string;
  connections: number;
  load: LoadResult;
  verification?: Verification;
}

function fmt(n: number, d = 1): string {
  return Number.isFinite(n) ? n.toFixed(d) : '–';
}

function table(rows: Row[]): string {
  const bare = new Map(rows.filter((r) => r.name.startsWith('bare')).map((r) => [r.connections, r.load.rps]));
  // Each row against the floor of its own round (ROUNDS).
  const round = (r: Row) => / #\d+$/.exec(r.name)?.[0] ?? '';
  const floor = new Map(rows.filter((r) => r.name.startsWith('reference: floor')).map((r) => [`${r.connections}${round(r)}`, r.load.rps]));
  const lines = [
    '| case | conns | req/s | p50 ms | p99 ms | ratio to bare | ratio to floor | non-2xx | 202s → jobs + inbox | CPU µs/req server · redis · loadgen | other processes (cores busy) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|',
  ];
  for (const r of rows) {
    const b = bare.get(r.connections);
    const f = floor.get(`${r.connections}${round(r)}`);
    const non2xx =
      Object.entries(r.load.statusAll)
        .filter(([s]) => !s.startsWith('2'))
        .reduce((a, [, n]) => a + n, 0) + r.load.socketErrors;
    const v = r.verification;
    const check = v ? `${v.accepted} → ${v.jobs} + ${v.inbox + v.inflight}${v.ok ? ' ✔' : ` ✘ (missing ${v.missing})`}` : '–';
    lines.push(
      `| ${r.name} | ${r.connections} | ${fmt(r.load.rps, 0)} | ${fmt(r.load.p50, 2)} | ${fmt(r.load.p99, 2)} | ${b ? fmt(r.load.rps / b, 2) + '×' : '–'} | ${f ? fmt(r.load.rps / f, 2) + '×' : '–'} | ${non2xx} | ${check} | ${['server', 'redis', 'loadgen'].map((k) => fmt(r.load.cpuUsPerReq?.[k] ?? NaN, 0)).join(' · ')} | ${fmt(r.load.foreignCores ?? NaN, 2)} |`,
    );
  }
  return lines.join('\n');
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/**
 * Per case over the rounds: best and median req/s, their ratios to the floor's best and median, each round's
 * ratio to its own round's floor (and their median: the figure that a drifting machine moves least), worst p99.
 */
function bestOf(rows: Row[]): string {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const k = `${r.name.replace(/ #\d+$/, '')}\u0000${r.connections}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const floorOf = (conns: number) => [...groups].find(([k]) => k.startsWith('reference: floor') && k.endsWith(`\u0000${conns}`))?.[1];
  const lines = [
    '| case (over rounds) | conns | best req/s | median req/s | best ÷ floor best | median ÷ floor median | rounds ÷ their floor (median) | worst p99 ms | median CPU µs/req server · redis | other processes (cores busy) per round |',
    '|---|---:|---:|---:|---:|---:|---|---:|---|---|',
  ];
  for (const [k, rs] of groups) {
    if (rs.length < 2) continue;
    const [name, conns] = k.split('\u0000') as [string, string];
    const rps = rs.map((r) => r.load.rps);
    const f = floorOf(Number(conns))?.map((r) => r.load.rps);
    const cpu = (p: string) => fmt(median(rs.map((r) => r.load.cpuUsPerReq?.[p] ?? NaN)), 0);
    const perRound = f && f.length === rps.length ? rps.map((x, i) => x / (f[i] as number)) : undefined;
    const rounds = perRound ? `${perRound.map((x) => fmt(x, 2)).join(', ')} (${fmt(median(perRound), 2)}×)` : '–';
    lines.push(
      `| ${name} | ${conns} | ${fmt(Math.max(...rps), 0)} | ${fmt(median(rps), 0)} | ${f ? fmt(Math.max(...rps) / Math.max(...f), 2) + '×' : '–'} | ` +
        `${f ? fmt(median(rps) / median(f), 2) + '×' : '–'} | ${rounds} | ${fmt(Math.max(...rs.map((r) => r.load.p99)), 2)} | ${cpu('server')} · ${cpu('redis')} | ${rs.map((r) => fmt(r.load.foreignCores ?? NaN, 2)).join(', ')} |`,
    );
  }
  return lines.join('\n');
}

/** One reference route (bench/ingest/reference-server.mjs) on a fresh redis-server (appendfsync everysec). */
async function referenceCase(mode: string, conns: number, tag: string): Promise<Row> {
  const redis = await startRedis('everysec');
  try {
    const ref = await startReference(mode, redis.port, tag);
    log(`reference: ${mode}, ${conns} connections${tag}`);
    const load = await runLoadWatched({ server: ref.child, redis: redis.child }, ref.port, conns, `${mode}${conns}`);
    await stop(ref.child);
    return { name: `reference: ${REFERENCE_NAMES[mode] ?? mode}${tag}`, connections: conns, load };
  } finally {
    await stop(redis.child);
  }
}

/** One Switchyard build on a fresh redis-server; then the inbox is drained and every 202 checked to be one job. */
async function switchyardCase(b: { label: string; bin: string; history: string }, fsync: string, conns: number, tag: string): Promise<Row> {
  const redis = await startRedis(fsync);
  const client = new Redis({ port: redis.port, host: '127.0.0.1', maxRetriesPerRequest: null });
  const name = `${b.label.replaceAll(' ', '-')}-${fsync}-c${conns}${tag.replace(' #', '-r')}`;
  try {
    const sy = await startSwitchyard(redis.port, name, b.bin, b.history);
    log(`${b.label} serve (appendfsync ${fsync}), ${conns} connections${tag}`);
    const idsFile = join(scratch, `accepted-${name}.txt`);
    const runId = `${fsync.slice(0, 2)}${conns}x${Date.now().toString(36)}`;
    const load = await runLoadWatched({ server: sy.child, redis: redis.child }, sy.port, conns, runId, idsFile);
    const backlogAtEnd = await client.llen(`${PREFIX}:ingest:inbox`);
    await stop(sy.child, 20_000);
    await drainWithPump(redis.port, client);
    const verification = await verify(client, idsFile, backlogAtEnd);
    if (!verification.ok) log(`VERIFY FAILED: ${JSON.stringify(verification)}`);
    return { name: `${b.label} (fsync ${fsync})${tag}`, connections: conns, load, verification };
  } finally {
    client.disconnect();
    await stop(redis.child);
  }
}

async function main(): Promise<void> {
  build();
  if (PROFILE) mkdirSync(PROFILE, { recursive: true });
  const rows: Row[] = [];

  for (const conns of CONNECTIONS) {
    const bare = await startBare();
    log(`bare Hono route, ${conns} connections`);
    rows.push({
      name: 'bare Hono 200',
      connections: conns,
      load: await runLoadWatched({ server: bare.child }, bare.port, conns, `bare${conns}`),
    });
    await stop(bare.child);
  }

  const bins: { label: string; bin: string }[] = [
    { label: 'switchyard', bin: BIN },
    ...COMPARE_BINS.map((bin, i) => ({ label: `switchyard ${String.fromCharCode(66 + i)}`, bin })),
  ];
  const builds = bins.flatMap((b) =>
    HISTORY.map((history) => ({ ...b, history, label: history === 'on' ? b.label : `${b.label} HISTORY=${history}` })),
  );
  // One round: every reference and Switchyard case once (each on a fresh redis-server).
  const cases: ((tag: string) => Promise<Row>)[] = [
    // The issue's reference points, on this same harness (appendfsync everysec).
    ...REFERENCE.flatMap((mode) => CONNECTIONS.map((conns) => (tag: string) => referenceCase(mode, conns, tag))),
    ...FSYNC.flatMap((fsync) => CONNECTIONS.flatMap((conns) => builds.map((b) => (tag: string) => switchyardCase(b, fsync, conns, tag)))),
  ];
  // ROUNDS > 1: the cases run again, interleaved, so a burst of foreign load on a shared
  // machine skews one round, not one case (see bestOf); each round starts one case later,
  // so no case always runs first or always right after another's teardown.
  for (let round = 1; round <= ROUNDS; round++) {
    const tag = ROUNDS > 1 ? ` #${round}` : '';
    for (let i = 0; i < cases.length; i++) {
      const run = cases[(i + round - 1) % cases.length] as (tag: string) => Promise<Row>;
      rows.push(await run(tag));
    }
  }

  const order = (r: Row) => CONNECTIONS.indexOf(r.connections);
  rows.sort((a, b) => order(a) - order(b));
  process.stdout.write(`\n${table(rows)}\n\n`);
  if (ROUNDS > 1) process.stdout.write(`${bestOf(rows)}\n\n`);
  process.stdout.write(`- machine: ${machine()}\n`);
  process.stdout.write(`- date: ${new Date().toUTCString()}; warm-up ${WARMUP} s, measured ${DURATION} s per case\n`);
  for (const r of rows) {
    if (!r.verification) continue;
    const v = r.verification;
    process.stdout.write(
      `- ${r.name} @${r.connections}: ${v.accepted} × 202 (warm-up included) → ${v.jobs} events jobs + ${v.inbox} in inbox + ${v.inflight} in flight; ` +
        `inbox backlog when the load stopped: ${v.backlogAtEnd}; ${v.ok ? 'exactly one job per 202' : `MISMATCH (missing ${v.missing})`}\n`,
    );
  }
  if (process.env.RESULTS) writeFileSync(process.env.RESULTS, JSON.stringify(rows, null, 2));
  if (rows.some((r) => r.verification && !r.verification.ok)) process.exitCode = 1;
}

await runBench(main, [scratch]);
