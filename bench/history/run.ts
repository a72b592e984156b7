// bench/history: what the delivery history costs the path from the inbox to a finished handler run,
// next to a plain BullMQ baseline doing the same two hops.
//
//   node --import tsx bench/history/run.ts          (from the repository root; builds dist/ first, SKIP_BUILD=1 skips it)
//
// The webhook route and the ingest pump write no history: receipt and queued
// time are written with the fan-out by the `events` worker (a repeat answered
// 200 duplicate is counted from the receiver, batched off the request). So
// receiver throughput (bench/ingest) and the pump are untouched by design, and
// the cost is in the workers. This measures them: a fresh redis-server (AOF
// everysec; one per run, FLUSHALLed before every case), N distinct ~500-byte
// `message.received` deliveries, then in this process, per case:
//
//   off         Switchyard, HISTORY=off: the inbox list filled (not timed), then the worker's IngestPump
//               (inbox → `events`, addBulk) and the BullMQ workers of `switchyard work` (startWorker; one
//               no-op handler, the bench/memory one): `events` fan-out → `handlers` → no-op run.
//   on          the same with HISTORY=on.
//   off-events  `off` without the pump's hop, like `plain`: the deliveries put in `events` beforehand (not timed)
//               as the pump leaves them (addBulk, pending fan-out marked); timed: the workers only.
//   on-events   the same with HISTORY=on.
//   plain       plain BullMQ, no pump: the N deliveries addBulk'ed to `events` beforehand (not timed); an
//               `events` Worker that JSON-parses the body and adds one `handlers` job (same data shape, job
//               id from the delivery key as Switchyard's fan-out makes it), and a `handlers` Worker with a
//               no-op processor. Same queue names, prefix, job options (src/queue/job-options.ts),
//               worker options (src/runtime/worker-options.ts: concurrency, lock, stalled checks) and
//               connection settings (createRedisConnection 'worker').
//   plain+pump  `plain` plus a pump-equivalent: the inbox list filled (not timed), a loop that LPOPs 200
//               items at a time, decodes them (decodeInboxItem) and addBulk's them to `events`.
//
// Timed span of every case: from starting the workers (and the pump) until every `events` and `handlers`
// job completed. The case order rotates by one per round, so drifts in foreign load hit every case.
// Reported per case: deliveries/s end to end, CPU µs per delivery of this process and of redis-server,
// and, with history on, Redis bytes per delivery of the history keys (UNLINKed and used_memory compared);
// per round, the ratios of deliveries/s (on ÷ off, off ÷ plain, on ÷ plain, …) and medians per case.
//
// Knobs: COMMANDSTATS=1 (log the Redis commands per delivery of each case), CLIENTCMDS=1 (log the commands this process sends per delivery), DELIVERIES=5000 ROUNDS=3 CONCURRENCY=10 CASES=off,on,off-events,on-events,plain,plain+pump RESULTS=<file.json>
//        WARMUP=1: untimed rounds before the ROUNDS (every case once; logged, not kept).
//        WINDOWS=<file.json>: the timed spans (process.hrtime, µs) and their CPU µs per case, for top-self-windows.mjs
//        with `node --cpu-prof` (the profile's sample clock is the same monotonic clock).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import type { Config } from '../../src/config/config.js';
import type { Handler } from '../../src/handler/define.js';
import type { StoredDelivery } from '../../src/queue/delivery.js';
import type { HandlerJobData } from '../../src/queue/jobs.js';
import type { RedisClient } from '../../src/redis/connection.js';
import { countClientCommands } from '../lib/client-commands.js';
import { build, cpuSeconds, log, machine, selfCpuSeconds, sleep, startRedis, runBench, until, type RunningRedis } from '../lib/proc.js';

/**
 * Switchyard's modules as they ship: the built dist/ (tsc's output; `npm run build` first, skipped with
 * SKIP_BUILD=1), not src/ through tsx, whose esbuild `keepNames` wraps every function made at run time in
 * `__name` (≈ 10 µs per delivery that users of the package never pay). Plain BullMQ runs as compiled JS from
 * node_modules, so both sides are then compiled JS; tsx runs only this harness (and the bench handler module).
 */
build();
const ours = async <M>(path: string): Promise<M> => (await import(new URL(`../../dist/${path}`, import.meta.url).href)) as M;
const { loadConfig } = await ours<typeof import('../../src/config/config.js')>('config/config.js');
const { jobIdFor } = await ours<typeof import('../../src/events/envelope.js')>('events/envelope.js');
const { decodeInboxItem, encodeInboxItem } = await ours<typeof import('../../src/queue/inbox-item.js')>('queue/inbox-item.js');
const { EVENTS_JOB_OPTIONS, handlerJobOptions } = await ours<typeof import('../../src/queue/job-options.js')>('queue/job-options.js');
const { EVENTS_QUEUE, HANDLER_QUEUE_BY_PRIORITY, ingestKeys } = await ours<typeof import('../../src/queue/names.js')>('queue/names.js');
const { IngestPump } = await ours<typeof import('../../src/queue/pump.js')>('queue/pump.js');
const { openQueues } = await ours<typeof import('../../src/queue/queues.js')>('queue/queues.js');
const { closeRedis, createRedisConnection } = await ours<typeof import('../../src/redis/connection.js')>('redis/connection.js');
const { startWorker } = await ours<typeof import('../../src/runtime/worker.js')>('runtime/worker.js');
const { workerOptions } = await ours<typeof import('../../src/runtime/worker-options.js')>('runtime/worker-options.js');
const { HandlerSet, handlerSnapshot } = await ours<typeof import('../../src/handler/set.js')>('handler/set.js');
const { loadHandlers } = await ours<typeof import('../../src/handler/loader.js')>('handler/loader.js');

const N = Number(process.env.DELIVERIES ?? 5_000);
const CONCURRENCY = process.env.CONCURRENCY ?? '10';
const ROUNDS = Number(process.env.ROUNDS ?? 3);
/** Untimed rounds first (every case once, rows logged but not kept): the first case run in a process pays for JIT warm-up. */
const WARMUP = Number(process.env.WARMUP ?? 1);
const PREFIX = 'switchyard';
/** CLIENTCMDS=1: the commands this process sends per delivery, by connection and command (bench/lib/client-commands.ts). */
const clientCommands = process.env.CLIENTCMDS ? countClientCommands() : undefined;
const ALL_CASES = ['off', 'on', 'off-events', 'on-events', 'plain', 'plain+pump'] as const;
type CaseName = (typeof ALL_CASES)[number];
const CASES: CaseName[] = (process.env.CASES ?? ALL_CASES.join(','))
  .split(',')
  .map((c) => c.trim())
  .filter(Boolean)
  .map((c) => {
    if (!(ALL_CASES as readonly string[]).includes(c)) throw new Error(`CASES: unknown case ${c} (known: ${ALL_CASES.join(', ')})`);
    return c as CaseName;
  });
const HOPS: Record<CaseName, string> = {
  off: 'inbox list → IngestPump → events (fan-out, history off) → handlers (no-op handler via processor)',
  on: 'inbox list → IngestPump → events (fan-out, history on) → handlers (no-op handler via processor)',
  'off-events':
    'events (pre-added as the pump adds them, pending fan-out marked) → fan-out (history off) → handlers (no-op handler via processor)',
  'on-events':
    'events (pre-added as the pump adds them, pending fan-out marked) → fan-out (history on) → handlers (no-op handler via processor)',
  plain: 'events (pre-added) → JSON.parse + add → handlers (no-op)',
  'plain+pump': 'list → LPOP 200 + addBulk → events → JSON.parse + add → handlers (no-op)',
};
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-history-'));
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').trim();

function item(i: number): string {
  const id = `evt_${randomBytes(16).toString('hex')}`;
  const at = new Date().toISOString();
  const body = JSON.stringify({
    id,
    event: 'message.received',
    created_at: at,
    data: {
      id: 100_000 + i,
      conversation_id: 812,
      type: 'message',
      direction: 'inbound',
      sender_type: 'contact',
      user_id: null,
      body: 'Hi! Is my order #1043 out for delivery yet? It was supposed to arrive on Tuesday and I have not heard back.',
      content_type: 'text',
      status: null,
      created_at: at,
    },
  });
  return encodeInboxItem({
    key: id,
    name: 'message.received',
    receivedAt: at,
    secretIndex: 0,
    body,
    headers: { 'content-type': 'application/json' },
  });
}

/** N fresh inbox items, in chunks of 1000 (the fill is not timed); `pending`: marked pending fan-out, as the ingest script does. */
async function fillList(r: Redis, list: string, pending?: string): Promise<void> {
  for (let i = 0; i < N; i += 1000) {
    const items = Array.from({ length: Math.min(1000, N - i) }, (_, j) => item(i + j));
    await r.rpush(list, ...items);
    if (pending)
      await markPending(
        r,
        pending,
        items.map((raw) => decodeInboxItem(raw)),
      );
  }
}

/** Marks deliveries pending fan-out (receipt ms → key), as the ingest script does when it stores them. */
async function markPending(r: Redis, pending: string, deliveries: readonly StoredDelivery[]): Promise<void> {
  await r.zadd(pending, 'NX', ...deliveries.flatMap((d) => [Date.parse(d.receivedAt), d.key]));
}

function eventsJob(d: StoredDelivery) {
  return { name: d.name ?? 'unknown', data: d, opts: { ...EVENTS_JOB_OPTIONS, jobId: jobIdFor(d.key) } };
}

interface Row {
  round: number;
  case: CaseName;
  history: boolean | null;
  position: number;
  ms: number;
  perSec: number;
  workerCpuUs: number;
  redisCpuUs: number;
  historyBytesPerDelivery: number | null;
}

/** What one case's timed span cost (wall ms, CPU s of this process and of redis-server) and when it ran (hrtime ns). */
interface Span {
  ms: number;
  cpu: number;
  rcpu: number;
  t0: bigint;
  t1: bigint;
}

/** Runs `work` as the timed span: from its start until every `events` and `handlers` job completed. */
async function timed(redis: RunningRedis, events: Queue, handlers: Queue, work: () => Promise<void>): Promise<Span> {
  const stats = process.env.COMMANDSTATS ? new Redis(redis.url) : undefined;
  await stats?.config('RESETSTAT');
  const cpu0 = selfCpuSeconds();
  const rcpu0 = cpuSeconds(redis.child.pid);
  const t0 = process.hrtime.bigint();
  const p0 = performance.now();
  clientCommands?.start();
  await work();
  await until(
    'every events and handlers job to complete',
    async () => (await events.getCompletedCount()) >= N && (await handlers.getCompletedCount()) >= N,
    600_000,
    20,
  );
  const ms = performance.now() - p0;
  if (clientCommands)
    log(
      `client commands per delivery: ${clientCommands
        .stop()
        .filter(([, v]) => v / N >= 0.01)
        .map(([k, v]) => `${k} ${(v / N).toFixed(2)}`)
        .join(', ')}`,
    );
  if (stats) {
    // COMMANDSTATS=1: the Redis commands of the span per delivery (the completion polling's few included).
    const info = await stats.info('commandstats');
    const net = await stats.info('stats');
    const bytes = (k: string) => Number(new RegExp(`${k}:(\\d+)`).exec(net)?.[1] ?? NaN) / N;
    log(
      `network bytes per delivery: into redis ${bytes('total_net_input_bytes').toFixed(0)}, out of redis ${bytes('total_net_output_bytes').toFixed(0)}`,
    );
    stats.disconnect();
    const per = [...info.matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g)]
      .map((m) => [m[1], Number(m[2]) / N, Number(m[3]) / N] as const)
      .filter(([, c]) => c >= 0.01)
      .sort((a, b) => b[2] - a[2]);
    log(
      `commands per delivery: ${per.map(([c, n, us]) => `${c} ${n.toFixed(2)} (${us.toFixed(0)} µs)`).join(', ')}; total ${per.reduce((t, [, n]) => t + n, 0).toFixed(2)}`,
    );
  }
  return { ms, cpu: selfCpuSeconds() - cpu0, rcpu: cpuSeconds(redis.child.pid) - rcpu0, t0, t1: process.hrtime.bigint() };
}

/**
 * Switchyard's worker path. `fromEvents`: the same two hops as `plain` — the deliveries are put in
 * `events` beforehand (not timed) as the pump leaves them (addBulk, pending fan-out marked), and no pump
 * runs; otherwise they start in the inbox list and the pump's hop is timed too.
 */
async function switchyardCase(redis: RunningRedis, r: Redis, history: boolean, noop: Handler[], fromEvents: boolean): Promise<Span> {
  const keys = ingestKeys(PREFIX);
  const commands = new Redis(redis.url, { maxRetriesPerRequest: null });
  const blocking = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queues = openQueues(commands, PREFIX);
  if (fromEvents) {
    for (let i = 0; i < N; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, N - i) }, (_, j) => decodeInboxItem(item(i + j)));
      await markPending(commands, keys.pendingFanOut, batch);
      await queues.events.addBulk(batch.map(eventsJob));
    }
  } else {
    await fillList(r, keys.inbox, keys.pendingFanOut);
  }
  await sleep(1000);
  const config = loadConfig({ QUEUE_PREFIX: PREFIX, HISTORY: history ? 'on' : 'off', WORKER_CONCURRENCY: CONCURRENCY, LOG_LEVEL: 'warn' });
  const logger = pino({ level: 'warn' });
  let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
  let pump: InstanceType<typeof IngestPump> | undefined;
  try {
    return await timed(redis, queues.events, queues.handlers.normal, async () => {
      worker = await startWorker(
        { config, redisUrl: redis.url, log: logger, set: new HandlerSet(handlerSnapshot(noop, undefined, {})) },
        queues,
      );
      if (fromEvents) return;
      pump = new IngestPump({ redis: commands, blocking, events: queues.events, prefix: PREFIX, log: logger });
      pump.start();
    });
  } finally {
    await pump?.stop();
    await worker?.close(5_000);
    await queues.close();
    commands.disconnect();
    blocking.disconnect();
  }
}

/** Plain BullMQ: `events` → one `handlers` job each → no-op; with `pump`, first LPOP from a list → addBulk to `events`. */
async function plainCase(redis: RunningRedis, r: Redis, pump: boolean, noop: Handler): Promise<Span> {
  const config: Config = loadConfig({ QUEUE_PREFIX: PREFIX, HISTORY: 'off', WORKER_CONCURRENCY: CONCURRENCY, LOG_LEVEL: 'warn' });
  const commands = createRedisConnection(redis.url, 'worker', 'plain-commands');
  const events = new Queue<StoredDelivery>(EVENTS_QUEUE, { connection: commands, prefix: PREFIX });
  const handlers = new Queue<HandlerJobData>(HANDLER_QUEUE_BY_PRIORITY.normal, { connection: commands, prefix: PREFIX });
  const list = `${PREFIX}:bench:plain-inbox`;
  if (pump) {
    await fillList(r, list);
  } else {
    for (let i = 0; i < N; i += 1000) {
      await events.addBulk(Array.from({ length: Math.min(1000, N - i) }, (_, j) => eventsJob(decodeInboxItem(item(i + j)))));
    }
  }
  await sleep(1000);
  const conns: RedisClient[] = [];
  const connect = (name: string) => {
    const c = createRedisConnection(redis.url, 'worker', name);
    conns.push(c);
    return c;
  };
  const workers: Worker[] = [];
  let pumping: Promise<void> | undefined;
  let stopPump = false;
  const handlerOpts = handlerJobOptions(noop.retry);
  try {
    return await timed(redis, events, handlers, async () => {
      workers.push(
        new Worker<StoredDelivery>(
          EVENTS_QUEUE,
          async (job: Job<StoredDelivery>) => {
            const d = job.data;
            const e = JSON.parse(d.body ?? '{}') as {
              id?: string;
              event: HandlerJobData['event']['name'];
              created_at?: string;
              data: unknown;
            };
            const data: HandlerJobData = {
              key: d.key,
              handlerId: noop.id,
              receivedAt: d.receivedAt,
              event: { id: e.id ?? null, name: e.event, createdAt: e.created_at ?? null, data: e.data },
            };
            await handlers.add(noop.id, data, { ...handlerOpts, jobId: jobIdFor(d.key, noop.id) });
          },
          { connection: connect('plain-events'), prefix: PREFIX, ...workerOptions(config) },
        ),
      );
      workers.push(
        new Worker<HandlerJobData>(HANDLER_QUEUE_BY_PRIORITY.normal, async () => undefined, {
          connection: connect('plain-handlers'),
          prefix: PREFIX,
          ...workerOptions(config),
        }),
      );
      for (const w of workers) w.on('error', (err) => log(`plain ${w.name} worker error: ${err.message}`));
      if (pump) {
        pumping = (async () => {
          while (!stopPump) {
            const items = await commands.lpop(list, 200);
            if (!items || items.length === 0) break;
            await events.addBulk(items.map((raw) => eventsJob(decodeInboxItem(raw))));
          }
        })();
      }
    });
  } finally {
    stopPump = true;
    await pumping?.catch((e: unknown) => log(`plain pump: ${String(e)}`));
    await Promise.allSettled(workers.map((w) => w.close()));
    await Promise.allSettled([events.close(), handlers.close()]);
    await Promise.allSettled([...conns, commands].map((c) => closeRedis(c)));
  }
}

async function historyBytes(r: Redis): Promise<number> {
  await sleep(1000);
  const before = Number(/used_memory:(\d+)/.exec(await r.info('memory'))?.[1]);
  const hist: string[] = [];
  let cursor = '0';
  do {
    const [c, ks] = await r.scan(cursor, 'MATCH', `${PREFIX}:hist:*`, 'COUNT', 1000);
    cursor = c;
    hist.push(...ks);
  } while (cursor !== '0');
  for (let i = 0; i < hist.length; i += 1000) await r.unlink(...hist.slice(i, i + 1000));
  await sleep(1000);
  const after = Number(/used_memory:(\d+)/.exec(await r.info('memory'))?.[1]);
  return Math.round((before - after) / N);
}

async function main(): Promise<void> {
  const load0 = loadavg();
  const redis = await startRedis(scratch);
  const r = new Redis(redis.url, { maxRetriesPerRequest: null });
  const rows: Row[] = [];
  const windows: { round: number; case: CaseName; startUs: number; endUs: number; cpuUs: number }[] = [];
  const noop = (await loadHandlers(join(import.meta.dirname, '../memory/handlers'))).map((l) => l.handler);
  const noopHandler = noop[0];
  if (!noopHandler) throw new Error('bench/memory/handlers: no handler');
  try {
    for (let round = 1 - WARMUP; round <= ROUNDS; round++) {
      // Rotation: round 1 runs the cases as listed, round 2 starts with the second, and so on.
      const order = CASES.map((_, i) => CASES[(i + Math.max(round, 1) - 1) % CASES.length] as CaseName);
      for (const [position, c] of order.entries()) {
        await r.flushall();
        const span =
          c === 'off' || c === 'on' || c === 'off-events' || c === 'on-events'
            ? await switchyardCase(redis, r, c.startsWith('on'), noop, c.endsWith('-events'))
            : await plainCase(redis, r, c === 'plain+pump', noopHandler);
        const row: Row = {
          round,
          case: c,
          history: c.startsWith('on') ? true : c.startsWith('off') ? false : null,
          position: position + 1,
          ms: Math.round(span.ms),
          perSec: Math.round(N / (span.ms / 1000)),
          workerCpuUs: Math.round((span.cpu * 1e6) / N),
          redisCpuUs: Math.round((span.rcpu * 1e6) / N),
          historyBytesPerDelivery: c.startsWith('on') ? await historyBytes(r) : null,
        };
        if (round < 1) {
          log(`warm-up ${JSON.stringify(row)}`);
          continue;
        }
        windows.push({
          round,
          case: c,
          startUs: Number(span.t0 / 1000n),
          endUs: Number(span.t1 / 1000n),
          cpuUs: Math.round(span.cpu * 1e6),
        });
        rows.push(row);
        log(JSON.stringify(row));
      }
    }
  } finally {
    r.disconnect();
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 === 1 ? (s[m] ?? NaN) : Math.round(((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2);
  };
  const medianOf = (c: CaseName) => {
    const mine = rows.filter((x) => x.case === c);
    return {
      perSec: median(mine.map((x) => x.perSec)),
      workerCpuUs: median(mine.map((x) => x.workerCpuUs)),
      redisCpuUs: median(mine.map((x) => x.redisCpuUs)),
    };
  };
  const at = (round: number, c: CaseName) => rows.find((x) => x.round === round && x.case === c);
  const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? null : Number((a / b).toFixed(3)));
  const pairs: [string, CaseName, CaseName][] = [
    ['on/off', 'on', 'off'],
    ['off/plain', 'off', 'plain'],
    ['on/plain', 'on', 'plain'],
    ['off/plain+pump', 'off', 'plain+pump'],
    ['on/plain+pump', 'on', 'plain+pump'],
    ['on-events/off-events', 'on-events', 'off-events'],
    ['off-events/plain', 'off-events', 'plain'],
    ['on-events/plain', 'on-events', 'plain'],
  ];
  const wanted = pairs.filter(([, a, b]) => CASES.includes(a) && CASES.includes(b));
  /** Per round, deliveries/s of case a ÷ case b, and the same for worker and redis CPU µs per delivery. */
  const roundRatios = Array.from({ length: ROUNDS }, (_, i) => {
    const round = i + 1;
    const of = (f: (x: Row) => number) =>
      Object.fromEntries(
        wanted.map(([k, a, b]) => [k, ratio(at(round, a) && f(at(round, a) as Row), at(round, b) && f(at(round, b) as Row))]),
      );
    return { round, perSec: of((x) => x.perSec), workerCpuUs: of((x) => x.workerCpuUs), redisCpuUs: of((x) => x.redisCpuUs) };
  });
  const medians = Object.fromEntries(CASES.map((c) => [c, medianOf(c)])) as Record<CaseName, ReturnType<typeof medianOf>>;
  const summary = {
    date: new Date().toUTCString(),
    machine: machine(),
    loadavgBefore: load0,
    loadavgAfter: loadavg(),
    deliveries: N,
    rounds: ROUNDS,
    warmupRounds: WARMUP,
    concurrency: Number(CONCURRENCY),
    cases: CASES,
    hops: Object.fromEntries(CASES.map((c) => [c, HOPS[c]])),
    rows,
    median: medians,
    medianRatios: {
      perSec: Object.fromEntries(wanted.map(([k, a, b]) => [k, ratio(medians[a].perSec, medians[b].perSec)])),
      workerCpuUs: Object.fromEntries(wanted.map(([k, a, b]) => [k, ratio(medians[a].workerCpuUs, medians[b].workerCpuUs)])),
      redisCpuUs: Object.fromEntries(wanted.map(([k, a, b]) => [k, ratio(medians[a].redisCpuUs, medians[b].redisCpuUs)])),
    },
    roundRatios,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  // The same as Markdown tables (bench/history/RESULTS-baseline.md).
  const md = [
    '| round | pos | case | deliveries/s | worker CPU µs/delivery | redis CPU µs/delivery | history B/delivery |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (x) =>
        `| ${x.round} | ${x.position} | ${x.case} | ${x.perSec} | ${x.workerCpuUs} | ${x.redisCpuUs} | ${x.historyBytesPerDelivery ?? ''} |`,
    ),
    ...CASES.map((c) => `| median | | ${c} | ${medians[c].perSec} | ${medians[c].workerCpuUs} | ${medians[c].redisCpuUs} | |`),
    '',
    `| round | ${wanted.map(([k]) => `${k} (deliveries/s)`).join(' | ')} | ${wanted.map(([k]) => `${k} (worker CPU)`).join(' | ')} |`,
    `|---|${wanted.map(() => '---|').join('')}${wanted.map(() => '---|').join('')}`,
    ...roundRatios.map(
      (x) =>
        `| ${x.round} | ${wanted.map(([k]) => x.perSec[k] ?? '').join(' | ')} | ${wanted.map(([k]) => x.workerCpuUs[k] ?? '').join(' | ')} |`,
    ),
  ];
  process.stdout.write(`\n${md.join('\n')}\n`);
  if (process.env.RESULTS) writeFileSync(process.env.RESULTS, JSON.stringify(summary, null, 2));
  if (process.env.WINDOWS) writeFileSync(process.env.WINDOWS, JSON.stringify({ deliveries: N, windows }, null, 2));
}

await runBench(main, [scratch]);
// A failed case can leave connections retrying against the stopped redis-server: do not hang on them.
if (process.exitCode === 1) process.exit(1);
