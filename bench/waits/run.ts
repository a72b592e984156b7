// bench/waits: durable sleeps and waits (issue "[3/4] Conversation workflows") at 100 000 pending.
//
//   node --import tsx bench/waits/run.ts          (from the repository root; no build needed)
//
// One process runs the workers (startWorker, as `switchyard work` does, with three handlers defined here) and an
// IngestPump per Redis; the receiver for phase 3 is a separate `switchyard serve` process. Two fresh redis-servers
// (AOF everysec, like production): A gets the pending runs, B stays empty (the baseline of phase 4).
//
//   1. fill    WAITS runs (`bw-waiter`, on conversation.closed) park in ctx.waitForEvent('reply', { event:
//              'message.received', match: 'conversation', timeout: 7d }) and SLEEPS runs (`bw-sleeper`, on
//              conversation.opened) park in ctx.sleepUntil('nap', now + 7d); one conversation each. The trigger
//              deliveries are RPUSHed to A's inbox list as the receiver's route leaves them (encodeInboxItem), so the
//              rest of the path is the real one: IngestPump → `events` (fan-out) → `handlers` → the handler runs,
//              parks (run record, WaitStore registration, BullMQ moveToDelayed). Done when `wf:due` lists every
//              run. Redis used_memory before and after (inbox drained) → bytes per pending run, all included.
//   4. unrelated work, with the pending runs (A) vs none (B), side by side: ROUNDS rounds (+ WARMUP untimed), the
//              order of A and B alternating; per case UNRELATED `message.sent` deliveries (a no-op handler; no run
//              waits on or cancels on that name) are RPUSHed to the inbox (not timed), then the pump is started:
//              timed until the no-op handler ran UNRELATED times. Deliveries/s, ratio A ÷ B per round and median.
//   2. lateness on A (the pending runs still there): LATE runs `sleepUntil` due times spread evenly over LATE_SPREAD
//              seconds (1 000/s by default), starting far enough ahead that all of them are parked first (the lead
//              is computed from phase 1's park rate); for each, the time its resumed run got past the sleep
//              (Date.now() in the handler) minus its due time. A run that reached its sleep after its due time
//              (never parked) is counted and left out.
//   3. event → resume on A: EVENTS of the waiting conversations, one at a time every EVENT_GAP_MS, each a signed
//              `message.received` POSTed over HTTP to `switchyard serve` (a child process on A); from the 202
//              (response headers in) to the resumed run getting past its waitForEvent (Date.now() in the handler).
//   split      workers stopped; for the runs still parked, their bookkeeping deleted key by key (the run record
//              `run:<scope>`, its `wf:due` member, and for a wait its `wait:state` field and `wait:on:<key>` field):
//              used_memory before/after, separately for sleeps and waits; then the runs' own BullMQ jobs (the job
//              hash and its `delayed` member): bytes per run, reported apart (not part of "bytes per wait").
//
// Knobs: WAITS=50000 SLEEPS=50000 UNRELATED=5000 ROUNDS=3 WARMUP=1 LATE=10000 LATE_SPREAD=10 EVENTS=200
//        FILL_HISTORY=clean|keep (the fill's completed `events` jobs removed after phase 1's memory reading, or left) COMMANDSTATS=1 (log the Redis commands per unrelated delivery, by µs) LATE_LEAD=<s> (default from phase 1's park rate) EVENT_GAP_MS=50 CONCURRENCY=10 (WORKER_CONCURRENCY) FILL_CONCURRENCY=50 HISTORY=off PHASES=fill,unrelated,late,events,split
//        MATCH=conversation|where|fn (how bw-waiter matches; `where`/`fn`: it waits for message.sent, the unrelated deliveries' name)
//        RESULTS=<file.json>
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { defineHandler, type Handler } from '../../src/handler/define.js';
import { HandlerSet, handlerSnapshot } from '../../src/handler/set.js';
import { sign } from '../../src/events/signature.js';
import { encodeInboxItem } from '../../src/queue/inbox-item.js';
import { ingestKeys } from '../../src/queue/names.js';
import { IngestPump } from '../../src/queue/pump.js';
import { openQueues, type Queues } from '../../src/queue/queues.js';
import { startWorker, type WorkerService } from '../../src/runtime/worker.js';
import { parkedKey, RunRecords, runKey, type ParkedRun } from '../../src/queue/waits/runs.js';
import {
  BIN,
  cpuSeconds,
  freePort,
  httpOk,
  log,
  machine,
  runBench,
  selfCpuSeconds,
  sleep,
  start,
  startRedis,
  stop,
  until,
  type RunningRedis,
} from '../lib/proc.js';

const env = process.env;
const WAITS = Number(env.WAITS ?? 50_000);
const SLEEPS = Number(env.SLEEPS ?? 50_000);
const UNRELATED = Number(env.UNRELATED ?? 5_000);
const ROUNDS = Number(env.ROUNDS ?? 3);
const WARMUP = Number(env.WARMUP ?? 1);
const LATE = Number(env.LATE ?? 10_000);
const LATE_SPREAD_MS = Number(env.LATE_SPREAD ?? 10) * 1000;
const EVENTS = Number(env.EVENTS ?? 200);
const EVENT_GAP_MS = Number(env.EVENT_GAP_MS ?? 50);
const CONCURRENCY = env.CONCURRENCY ?? '10';
const HISTORY = env.HISTORY ?? 'off';
/** WORKER_CONCURRENCY of the workers while phase 1 fills (then CONCURRENCY again). */
const FILL_CONCURRENCY = env.FILL_CONCURRENCY ?? '50';
/** `clean`: the fill's completed `events` jobs are removed once it is measured (see fill); `keep`: left (runs 1–5). */
const FILL_HISTORY = env.FILL_HISTORY ?? 'clean';
/**
 * How bw-waiter matches: `conversation` (default); `where` waits for `message.sent` with `{ on: 'conversation',
 * where }` and `fn` with a bare key function (deprecated), so phase 4's unrelated `message.sent` deliveries (other
 * conversations) are of the name the waits wait for (issue 32 item 4; with PHASES=fill,unrelated).
 */
const MATCH = env.MATCH ?? 'conversation';
const PHASES = new Set((env.PHASES ?? 'fill,unrelated,late,events,split').split(',').map((s) => s.trim()));
const PREFIX = 'switchyard';
const SECRET = 'bench-secret';
const LONG_MS = 7 * 86_400_000;
const WAIT_CONV = 1_000_000;
const SLEEP_CONV = 2_000_000;
const LATE_CONV = 3_000_000;
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-waits-'));
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').trim();

// ── the handlers (in this process; what they see is recorded here) ──

const S = {
  /** bw-sleeper: due time by conversation (phase 2); others sleep 7 days. */
  dueOf: new Map<number, number>(),
  /** Conversations whose sleeper ran at least once (a later pass past the sleep is a resume). */
  seen: new Set<number>(),
  /** Phase 2: resumed − due (ms), by conversation. */
  late: new Map<number, number>(),
  /** Phase 2: runs that reached their sleep after its due time (never parked). */
  notParked: 0,
  /** bw-waiter: when the run got past its wait, by conversation. */
  resumed: new Map<number, number>(),
  noop: 0,
};

const waiter = defineHandler({
  id: 'bw-waiter',
  on: ['conversation.closed'],
  async handle(event, ctx) {
    if (MATCH === 'where') {
      // Function-matched, keyed: the same name as phase 4's unrelated deliveries, in other conversations.
      await ctx.waitForEvent('reply', {
        event: 'message.sent',
        match: { on: 'conversation', where: (e) => e.data.direction === 'outbound' },
        timeout: LONG_MS,
      });
    } else if (MATCH === 'fn') {
      // The deprecated bare key function: every message.sent is a candidate of every such wait.
      const conv = (e: { data: unknown }) =>
        (e.data as { conversation_id?: number; id?: number }).conversation_id ?? (e.data as { id?: number }).id;
      await ctx.waitForEvent('reply', { event: 'message.sent', match: conv, timeout: LONG_MS });
    } else {
      await ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: LONG_MS });
    }
    S.resumed.set(event.data.id, Date.now());
  },
});

const sleeper = defineHandler({
  id: 'bw-sleeper',
  on: ['conversation.opened'],
  async handle(event, ctx) {
    const conv = event.data.id;
    const due = S.dueOf.get(conv) ?? Date.now() + LONG_MS;
    const first = !S.seen.has(conv);
    S.seen.add(conv);
    await ctx.sleepUntil('nap', due);
    const now = Date.now();
    if (!S.dueOf.has(conv)) return;
    if (first) S.notParked++;
    else S.late.set(conv, now - due);
  },
});

const noop = defineHandler({
  id: 'bw-noop',
  on: ['message.sent'],
  async handle() {
    S.noop++;
  },
});

const HANDLERS = [waiter, sleeper, noop] as unknown as Handler[];

// ── deliveries ──

const iso = (ms: number) => new Date(ms).toISOString();
const newId = () => `evt_${randomUUID().replace(/-/g, '')}`;

function conversationBody(event: string, conv: number): string {
  const at = Date.now();
  return JSON.stringify({
    id: newId(),
    event,
    created_at: iso(at),
    data: {
      id: conv,
      contact_id: 500_000 + (conv % 100_000),
      channel: { id: 1, name: 'WhatsApp', type: 'whatsapp' },
      status: 'open',
      subject: 'Order #1043',
      assignee: { type: 'user', id: 21 },
      last_message_at: iso(at),
      closed_at: null,
      created_at: iso(at - 60_000),
    },
  });
}

/** Message ids are unique: the worker's change claims take two deliveries of one message id as one change (the second runs no handler). */
let messageId = 0;

function messageBody(event: 'message.received' | 'message.sent', conv: number): string {
  const at = Date.now();
  const inbound = event === 'message.received';
  return JSON.stringify({
    id: newId(),
    event,
    created_at: iso(at),
    data: {
      id: 70_000_000 + ++messageId,
      conversation_id: conv,
      type: 'message',
      direction: inbound ? 'inbound' : 'outbound',
      sender_type: inbound ? 'contact' : 'user',
      user_id: inbound ? null : 21,
      body: 'Hi! Is my order #1043 out for delivery yet? It was supposed to arrive on Tuesday and I have not heard back.',
      content_type: 'text',
      status: null,
      created_at: iso(at),
    },
  });
}

/** An inbox item as the webhook route leaves it (no dedupe key: the items are distinct by construction). */
function inboxItem(body: string): string {
  const { id, event } = JSON.parse(body) as { id: string; event: string };
  return encodeInboxItem({
    key: id,
    name: event,
    receivedAt: new Date().toISOString(),
    secretIndex: 0,
    body,
    headers: { 'content-type': 'application/json' },
  });
}

async function fillInbox(r: Redis, bodies: () => Iterable<string>): Promise<number> {
  const inbox = ingestKeys(PREFIX).inbox;
  let n = 0;
  let chunk: string[] = [];
  for (const b of bodies()) {
    chunk.push(inboxItem(b));
    if (chunk.length === 1000) {
      await r.rpush(inbox, ...chunk);
      n += chunk.length;
      chunk = [];
    }
  }
  if (chunk.length > 0) {
    await r.rpush(inbox, ...chunk);
    n += chunk.length;
  }
  return n;
}

// ── the workers on one Redis ──

interface Side {
  name: string;
  redis: RunningRedis;
  r: Redis;
  commands: Redis;
  queues: Queues;
  worker: WorkerService;
  pump?: IngestPump | undefined;
}

async function openSide(name: string, redis: RunningRedis): Promise<Side> {
  const r = new Redis(redis.url, { maxRetriesPerRequest: null });
  const commands = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queues = openQueues(commands, PREFIX);
  return { name, redis, r, commands, queues, worker: await startWorkers(redis, queues, CONCURRENCY) };
}

function startWorkers(redis: RunningRedis, queues: Queues, concurrency: string): Promise<WorkerService> {
  const config = loadConfig({ QUEUE_PREFIX: PREFIX, HISTORY, WORKER_CONCURRENCY: concurrency, LOG_LEVEL: 'warn' });
  return startWorker(
    { config, redisUrl: redis.url, log: pino({ level: 'warn' }), set: new HandlerSet(handlerSnapshot(HANDLERS, undefined, {})) },
    queues,
  );
}

function startPump(s: Side): void {
  if (s.pump) return;
  // A new blocking connection each time: stop() disconnects it to end the BLMOVE.
  const blocking = new Redis(s.redis.url, { maxRetriesPerRequest: null });
  s.pump = new IngestPump({ redis: s.commands, blocking, events: s.queues.events, prefix: PREFIX, log: pino({ level: 'warn' }) });
  s.pump.start();
}

async function stopPump(s: Side): Promise<void> {
  await s.pump?.stop();
  s.pump = undefined;
}

async function closeSide(s: Side): Promise<void> {
  await stopPump(s);
  await s.worker.close(5_000);
  await s.queues.close();
  s.commands.disconnect();
}

const usedMemory = async (r: Redis) => Number(/used_memory:(\d+)/.exec(await r.info('memory'))?.[1]);
/** used_memory once Redis settled (lazy frees, rehashing): the lowest of a few reads a moment apart. */
async function settledMemory(r: Redis): Promise<number> {
  await sleep(1500);
  let m = Infinity;
  for (let i = 0; i < 3; i++) {
    m = Math.min(m, await usedMemory(r));
    await sleep(300);
  }
  return m;
}
const parkedCount = (r: Redis) => r.zcard(parkedKey(PREFIX));
const inboxEmpty = async (r: Redis) => (await r.llen(ingestKeys(PREFIX).inbox)) === 0;

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}
const median = (xs: number[]) => pct(xs, 50);
const round1 = (x: number) => Math.round(x * 10) / 10;

// ── phases ──

interface FillResult {
  runs: number;
  waits: number;
  sleeps: number;
  seconds: number;
  parkRate: number;
  usedBefore: number;
  usedAfter: number;
  bytesPerRun: number;
  workerCpuUsPerRun: number;
  redisCpuUsPerRun: number;
}

async function fill(a: Side): Promise<FillResult> {
  if (FILL_CONCURRENCY !== CONCURRENCY) {
    await a.worker.close(5_000);
    a.worker = await startWorkers(a.redis, a.queues, FILL_CONCURRENCY);
  }
  const before = await settledMemory(a.r);
  const cpu0 = selfCpuSeconds();
  const rcpu0 = cpuSeconds(a.redis.child.pid);
  const t0 = Date.now();
  startPump(a);
  // Interleaved, in chunks, so the workers start on the first ones while the rest is pushed.
  const n = await fillInbox(a.r, function* () {
    for (let i = 0; i < Math.max(WAITS, SLEEPS); i++) {
      if (i < WAITS) yield conversationBody('conversation.closed', WAIT_CONV + i);
      if (i < SLEEPS) yield conversationBody('conversation.opened', SLEEP_CONV + i);
    }
  });
  let last = 0;
  await until(
    `${n} runs parked`,
    async () => {
      const p = await parkedCount(a.r);
      if (p - last >= 10_000) {
        log(`parked ${p} (${Math.round(p / ((Date.now() - t0) / 1000))}/s)`);
        last = p;
      }
      return p >= n;
    },
    3_600_000,
    250,
  );
  const seconds = (Date.now() - t0) / 1000;
  const cpu = selfCpuSeconds() - cpu0;
  const rcpu = cpuSeconds(a.redis.child.pid) - rcpu0;
  await until('the inbox to drain', () => inboxEmpty(a.r), 60_000);
  const after = await settledMemory(a.r);
  if (FILL_HISTORY === 'clean') {
    // The fill's 100 000 trigger deliveries left as many completed `events` jobs, over the 20 000 that
    // removeOnComplete keeps: left there, every later completion on A deletes one (phase 4 would charge that to
    // the pending runs; B has no such history). Measured above, removed now.
    for (let n = 1; n > 0;) n = (await a.queues.events.clean(0, 10_000, 'completed')).length;
  }
  if (FILL_CONCURRENCY !== CONCURRENCY) {
    await a.worker.close(5_000);
    a.worker = await startWorkers(a.redis, a.queues, CONCURRENCY);
  }
  return {
    runs: n,
    waits: WAITS,
    sleeps: SLEEPS,
    seconds: round1(seconds),
    parkRate: Math.round(n / seconds),
    usedBefore: before,
    usedAfter: after,
    bytesPerRun: Math.round((after - before) / n),
    workerCpuUsPerRun: Math.round((cpu * 1e6) / n),
    redisCpuUsPerRun: Math.round((rcpu * 1e6) / n),
  };
}

interface UnrelatedRow {
  round: number;
  position: number;
  case: 'pending' | 'none';
  pendingRuns: number;
  ms: number;
  perSec: number;
  workerCpuUs: number;
  redisCpuUs: number;
  forks: number;
}

/** Per command: calls and µs so far (`INFO commandstats`). */
async function commandStats(r: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const m of (await r.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g))
    out.set(m[1] as string, { calls: Number(m[2]), usec: Number(m[3]) });
  return out;
}

/** COMMANDSTATS=1: the commands A's and B's Redis ran per delivery in a case, by µs (top 8). */
function commandDelta(
  before: Map<string, { calls: number; usec: number }>,
  after: Map<string, { calls: number; usec: number }>,
  n: number,
): string {
  return [...after]
    .map(([c, a]) => ({ c, calls: (a.calls - (before.get(c)?.calls ?? 0)) / n, usec: (a.usec - (before.get(c)?.usec ?? 0)) / n }))
    .filter((x) => x.calls > 0)
    .sort((x, y) => y.usec - x.usec)
    .slice(0, 8)
    .map((x) => `${x.c} ${x.calls.toFixed(2)}×/${x.usec.toFixed(0)}µs`)
    .join(', ');
}

/** Forks of a redis-server so far (an AOF rewrite forks; its child's CPU is not in the server's own). */
const forks = async (r: Redis) => Number(/total_forks:(\d+)/.exec(await r.info('stats'))?.[1]);

async function unrelatedCase(s: Side, round: number, position: number, label: UnrelatedRow['case']): Promise<UnrelatedRow> {
  await stopPump(s);
  await fillInbox(s.r, function* () {
    for (let i = 0; i < UNRELATED; i++) yield messageBody('message.sent', 9_000_000 + i);
  });
  await sleep(500);
  S.noop = 0;
  const forks0 = await forks(s.r);
  const stats0 = env.COMMANDSTATS === '1' ? await commandStats(s.r) : undefined;
  const cpu0 = selfCpuSeconds();
  const rcpu0 = cpuSeconds(s.redis.child.pid);
  const t0 = performance.now();
  startPump(s);
  await until(`${UNRELATED} no-op runs`, async () => S.noop >= UNRELATED, 600_000, 10);
  const ms = performance.now() - t0;
  const row: UnrelatedRow = {
    round,
    position,
    case: label,
    pendingRuns: await parkedCount(s.r),
    ms: Math.round(ms),
    perSec: Math.round(UNRELATED / (ms / 1000)),
    workerCpuUs: Math.round(((selfCpuSeconds() - cpu0) * 1e6) / UNRELATED),
    redisCpuUs: Math.round(((cpuSeconds(s.redis.child.pid) - rcpu0) * 1e6) / UNRELATED),
    forks: (await forks(s.r)) - forks0,
  };
  if (stats0) log(`commands per delivery (${label}): ${commandDelta(stats0, await commandStats(s.r), UNRELATED)}`);
  await stopPump(s);
  return row;
}

async function unrelated(a: Side, b: Side): Promise<UnrelatedRow[]> {
  const rows: UnrelatedRow[] = [];
  for (let round = 1 - WARMUP; round <= ROUNDS; round++) {
    const order: [Side, UnrelatedRow['case']][] =
      (round + 2) % 2 === 1
        ? [
            [a, 'pending'],
            [b, 'none'],
          ]
        : [
            [b, 'none'],
            [a, 'pending'],
          ];
    for (const [position, [side, label]] of order.entries()) {
      const row = await unrelatedCase(side, round, position + 1, label);
      log(`${round < 1 ? 'warm-up ' : ''}${JSON.stringify(row)}`);
      if (round >= 1) rows.push(row);
    }
  }
  return rows;
}

interface LateResult {
  sleeps: number;
  spreadMs: number;
  ratePerSec: number;
  leadMs: number;
  parkedBeforeFirstDue: number;
  notParked: number;
  resumed: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  min: number;
  resumeRatePerSec: number;
  /** CPU per resume from the first due time until the last resumed: this process (the workers) and A's redis-server. */
  workerCpuUsPerResume: number;
  redisCpuUsPerResume: number;
}

async function lateness(a: Side, parkRate: number): Promise<LateResult> {
  startPump(a);
  const parked0 = await parkedCount(a.r);
  // Far enough ahead that every one of them is parked before the first is due (phase 1's rate, halved, + 3 s).
  const leadMs = env.LATE_LEAD ? Number(env.LATE_LEAD) * 1000 : Math.round((LATE / Math.max(50, parkRate)) * 2000) + 3000;
  const base = Date.now() + leadMs;
  for (let i = 0; i < LATE; i++) S.dueOf.set(LATE_CONV + i, base + Math.floor((i * LATE_SPREAD_MS) / LATE));
  log(`lateness: ${LATE} sleeps due from +${leadMs} ms over ${LATE_SPREAD_MS} ms`);
  await fillInbox(a.r, function* () {
    for (let i = 0; i < LATE; i++) yield conversationBody('conversation.opened', LATE_CONV + i);
  });
  await until(
    'the lateness sleeps to park',
    async () => (await parkedCount(a.r)) - parked0 >= LATE || Date.now() >= base,
    leadMs + 1000,
    100,
  );
  const parkedBeforeFirstDue = (await parkedCount(a.r)) - parked0;
  log(`lateness: ${parkedBeforeFirstDue} parked ${base - Date.now()} ms before the first due time`);
  await until('the first due time', async () => Date.now() >= base, leadMs + 1000, 5);
  const cpu0 = selfCpuSeconds();
  const rcpu0 = cpuSeconds(a.redis.child.pid);
  await until('every lateness sleep to resume', async () => S.late.size + S.notParked >= LATE, LATE_SPREAD_MS + leadMs + 300_000, 100);
  const cpuUs = (x: number) => Math.round((x * 1e6) / Math.max(1, S.late.size));
  const workerCpuUsPerResume = cpuUs(selfCpuSeconds() - cpu0);
  const redisCpuUsPerResume = cpuUs(cpuSeconds(a.redis.child.pid) - rcpu0);
  const xs = [...S.late.values()];
  const resumedAt = [...S.late.entries()].map(([conv, l]) => (S.dueOf.get(conv) as number) + l);
  const span = (Math.max(...resumedAt) - Math.min(...resumedAt)) / 1000;
  return {
    sleeps: LATE,
    spreadMs: LATE_SPREAD_MS,
    ratePerSec: Math.round(LATE / (LATE_SPREAD_MS / 1000)),
    leadMs,
    parkedBeforeFirstDue,
    notParked: S.notParked,
    resumed: xs.length,
    p50: pct(xs, 50),
    p90: pct(xs, 90),
    p99: pct(xs, 99),
    max: Math.max(...xs),
    min: Math.min(...xs),
    resumeRatePerSec: Math.round(xs.length / Math.max(span, 0.001)),
    workerCpuUsPerResume,
    redisCpuUsPerResume,
  };
}

interface EventsResult {
  events: number;
  gapMs: number;
  resumed: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  http202p50: number;
  http202p99: number;
  fromSendP50: number;
  fromSendP99: number;
  pendingRuns: number;
}

function post(port: number, agent: Agent, body: string): Promise<number> {
  return new Promise((res, rej) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/webhooks',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-service-signature': sign(SECRET, body),
        },
      },
      (resp) => {
        resp.resume();
        resp.on('end', () => undefined);
        res(resp.statusCode ?? 0);
      },
    );
    req.on('error', rej);
    req.end(body);
  });
}

async function eventResume(a: Side): Promise<EventsResult> {
  startPump(a);
  const port = await freePort();
  const child = start('node', [BIN, 'serve'], {
    name: 'serve',
    env: {
      WEBHOOK_SECRETS: SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      REDIS_URL: a.redis.url,
      LOG_LEVEL: 'warn',
      QUEUE_PREFIX: PREFIX,
      HISTORY,
    },
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  try {
    await until('switchyard serve /readyz', () => httpOk(`http://127.0.0.1:${port}/readyz`), 60_000, 200);
    const pendingRuns = await parkedCount(a.r);
    const step = Math.max(1, Math.floor(WAITS / EVENTS));
    const convs = Array.from({ length: Math.min(EVENTS, WAITS) }, (_, j) => WAIT_CONV + j * step);
    const sent = new Map<number, { send: number; accepted: number }>();
    // A warm-up delivery of a conversation nobody waits on (the receiver's first request pays for its JIT).
    await post(port, agent, messageBody('message.received', 8_999_999));
    for (const conv of convs) {
      const body = messageBody('message.received', conv);
      const t0 = Date.now();
      const status = await post(port, agent, body);
      const t1 = Date.now();
      if (status !== 202) throw new Error(`receiver answered ${status}`);
      sent.set(conv, { send: t0, accepted: t1 });
      await sleep(EVENT_GAP_MS);
    }
    await until('every waiting run to resume', async () => convs.every((c) => S.resumed.has(c)), 60_000, 20);
    const lat = convs.map((c) => (S.resumed.get(c) as number) - (sent.get(c) as { accepted: number }).accepted);
    const http = convs.map((c) => {
      const s = sent.get(c) as { send: number; accepted: number };
      return s.accepted - s.send;
    });
    const fromSend = convs.map((c) => (S.resumed.get(c) as number) - (sent.get(c) as { send: number }).send);
    return {
      events: convs.length,
      gapMs: EVENT_GAP_MS,
      resumed: convs.filter((c) => S.resumed.has(c)).length,
      p50: pct(lat, 50),
      p90: pct(lat, 90),
      p99: pct(lat, 99),
      max: Math.max(...lat),
      http202p50: pct(http, 50),
      http202p99: pct(http, 99),
      fromSendP50: pct(fromSend, 50),
      fromSendP99: pct(fromSend, 99),
      pendingRuns,
    };
  } finally {
    agent.destroy();
    await stop(child);
  }
}

interface SplitResult {
  runs: number;
  sleeps: number;
  waits: number;
  /** Bytes per sleep: its run record, its `wf:due` member, both. */
  sleep: { record: number; parkedEntry: number; total: number };
  /** Bytes per wait: its run record, its `wf:due` member, its WaitStore entries (`wait:state`, `wait:on:<key>`), all. */
  wait: { record: number; parkedEntry: number; store: number; total: number };
  /** Bytes per run of its own BullMQ job (job hash + `delayed` member). */
  jobBytes: number;
}

type ParkedEntry = ParkedRun;
type Pipe = ReturnType<Redis['pipeline']>;

/** Deletes, per parked run, its bookkeeping piece by piece (sleeps, then waits) and then its BullMQ job, measuring used_memory around each. */
async function split(a: Side): Promise<SplitResult> {
  const r = a.r;
  const parked = await new RunRecords(r, PREFIX).parked();
  const sleeps = parked.filter((p) => p.kind === 'sleep');
  const waits = parked.filter((p) => p.kind !== 'sleep');
  let m = await settledMemory(r);
  /** Runs `op` for each of `xs` (pipelined) and gives the bytes freed per item. */
  const freed = async (xs: ParkedEntry[], op: (pipe: Pipe, p: ParkedEntry) => void): Promise<number> => {
    for (let i = 0; i < xs.length; i += 1000) {
      const pipe = r.pipeline();
      for (const p of xs.slice(i, i + 1000)) op(pipe, p);
      await pipe.exec();
    }
    const next = await settledMemory(r);
    const per = xs.length > 0 ? Math.round((m - next) / xs.length) : NaN;
    m = next;
    return per;
  };
  const record = (pipe: Pipe, p: ParkedEntry) => {
    pipe.del(runKey(PREFIX, p.scope));
  };
  const parkedEntry = (pipe: Pipe, p: ParkedEntry) => {
    pipe.zrem(parkedKey(PREFIX), p.scope);
  };
  const store = (pipe: Pipe, p: ParkedEntry) => {
    const id = `${p.scope}:w:${p.name}`;
    pipe.hdel(`${PREFIX}:wait:state`, id);
    pipe.hdel(`${PREFIX}:wait:on:${p.key ?? ''}`, id);
  };
  const sRecord = await freed(sleeps, record);
  const sParked = await freed(sleeps, parkedEntry);
  const wRecord = await freed(waits, record);
  const wParked = await freed(waits, parkedEntry);
  const wStore = await freed(waits, store);
  const jobBytes = await freed(parked, (pipe, p) => {
    pipe.del(`${PREFIX}:${p.queue}:${p.jobId}`);
    pipe.zrem(`${PREFIX}:${p.queue}:delayed`, p.jobId);
  });
  return {
    runs: parked.length,
    sleeps: sleeps.length,
    waits: waits.length,
    sleep: { record: sRecord, parkedEntry: sParked, total: sRecord + sParked },
    wait: { record: wRecord, parkedEntry: wParked, store: wStore, total: wRecord + wParked + wStore },
    jobBytes,
  };
}

async function main(): Promise<void> {
  const load0 = loadavg();
  const date0 = new Date().toUTCString();
  const redisA = await startRedis(scratch);
  const redisB = await startRedis(scratch);
  const a = await openSide('A (pending)', redisA);
  const b = PHASES.has('unrelated') ? await openSide('B (none)', redisB) : undefined;
  const out: Record<string, unknown> = {};
  try {
    let parkRate = 500;
    if (PHASES.has('fill')) {
      log(`fill: ${WAITS} waits + ${SLEEPS} sleeps`);
      const f = await fill(a);
      parkRate = f.parkRate;
      out.fill = f;
      log(`fill: ${JSON.stringify(f)}`);
    }
    if (b && PHASES.has('unrelated')) {
      const rows = await unrelated(a, b);
      const byRound = Array.from({ length: ROUNDS }, (_, i) => {
        const p = rows.find((x) => x.round === i + 1 && x.case === 'pending');
        const n = rows.find((x) => x.round === i + 1 && x.case === 'none');
        return p && n ? Number((p.perSec / n.perSec).toFixed(3)) : NaN;
      });
      const med = (c: UnrelatedRow['case']) => median(rows.filter((x) => x.case === c).map((x) => x.perSec));
      out.unrelated = {
        deliveries: UNRELATED,
        rounds: ROUNDS,
        rows,
        ratioByRound: byRound,
        medianPending: med('pending'),
        medianNone: med('none'),
        ratioOfMedians: Number((med('pending') / med('none')).toFixed(3)),
        medianOfRatios: median(byRound),
      };
      log(`unrelated: ${JSON.stringify(out.unrelated)}`);
      await closeSide(b);
    }
    if (PHASES.has('late')) {
      out.lateness = await lateness(a, parkRate);
      log(`lateness: ${JSON.stringify(out.lateness)}`);
    }
    if (PHASES.has('events') && WAITS > 0) {
      out.events = await eventResume(a);
      log(`events: ${JSON.stringify(out.events)}`);
    }
    await closeSide(a);
    if (PHASES.has('split')) {
      out.split = await split(a);
      log(`split: ${JSON.stringify(out.split)}`);
    }
  } finally {
    a.r.disconnect();
    b?.r.disconnect();
  }
  const summary = {
    date: date0,
    dateEnd: new Date().toUTCString(),
    machine: machine(),
    loadavgBefore: load0,
    loadavgAfter: loadavg(),
    knobs: {
      WAITS,
      SLEEPS,
      MATCH,
      FILL_CONCURRENCY: Number(FILL_CONCURRENCY),
      FILL_HISTORY,
      UNRELATED,
      ROUNDS,
      WARMUP,
      LATE,
      LATE_SPREAD_MS,
      EVENTS,
      EVENT_GAP_MS,
      CONCURRENCY: Number(CONCURRENCY),
      HISTORY,
    },
    ...out,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n\n${markdown(summary)}\n`);
  if (env.RESULTS) writeFileSync(env.RESULTS, JSON.stringify(summary, null, 2));
}

function markdown(s: Record<string, unknown>): string {
  const f = s.fill as FillResult | undefined;
  const sp = s.split as SplitResult | undefined;
  const u = s.unrelated as
    | {
        rows: UnrelatedRow[];
        ratioByRound: number[];
        medianPending: number;
        medianNone: number;
        ratioOfMedians: number;
        medianOfRatios: number;
      }
    | undefined;
  const l = s.lateness as LateResult | undefined;
  const e = s.events as EventsResult | undefined;
  const verdict = (ok: boolean) => (ok ? 'met' : 'missed');
  const lines = ['| goal | measured | target | verdict |', '|---|---|---|---|'];
  if (f || sp) {
    const wait = sp ? sp.wait.total : NaN;
    lines.push(
      `| 1. Redis bytes per pending wait | ${f ? `all in: ${f.bytesPerRun} B per pending run (${f.runs} runs, used_memory ${f.usedBefore} → ${f.usedAfter})` : ''}${sp ? `; bookkeeping **${sp.wait.total} B per wait** (run record ${sp.wait.record} + wf:due ${sp.wait.parkedEntry} + WaitStore ${sp.wait.store}), ${sp.sleep.total} B per sleep (record ${sp.sleep.record} + wf:due ${sp.sleep.parkedEntry}); the run's own BullMQ job ${sp.jobBytes} B (not counted in the wait's)` : ''} | ≤ 1 KB for the wait | ${sp ? verdict(wait <= 1024) : '–'} |`,
    );
  }
  if (l)
    lines.push(
      `| 2. wake-up lateness (${l.sleeps} sleeps, ${l.ratePerSec}/s) | p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms (${l.resumed} resumed, ${l.notParked} never parked; resumed at ${l.resumeRatePerSec}/s; ${l.workerCpuUsPerResume} µs worker + ${l.redisCpuUsPerResume} µs Redis CPU per resume) | p99 ≤ 1 s | ${verdict(l.p99 <= 1000 && l.notParked === 0)} |`,
    );
  if (e)
    lines.push(
      `| 3. event (202) → run resumed (${e.events} events, 1 per ${e.gapMs} ms, ${e.pendingRuns} runs parked) | p50 ${e.p50} ms, p99 ${e.p99} ms, max ${e.max} ms (HTTP 202 p50 ${e.http202p50} / p99 ${e.http202p99} ms) | p99 ≤ 250 ms | ${verdict(e.p99 <= 250)} |`,
    );
  if (u)
    lines.push(
      `| 4. unrelated deliveries/s, pending ÷ none | median ${u.medianPending} vs ${u.medianNone}/s = ${u.ratioOfMedians}× (rounds ${u.ratioByRound.join(', ')}) | ≥ 0.9× | ${verdict(u.ratioOfMedians >= 0.9)} |`,
    );
  if (f)
    lines.push(
      '',
      `Fill: ${f.runs} runs parked in ${f.seconds} s (${f.parkRate}/s), ${f.workerCpuUsPerRun} µs worker CPU + ${f.redisCpuUsPerRun} µs Redis CPU per run (fan-out + first run + park).`,
    );
  if (u) {
    lines.push(
      '',
      '| round | pos | case | pending runs | ms | deliveries/s | worker CPU µs/delivery | redis CPU µs/delivery | redis forks (AOF rewrite) |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const x of u.rows)
      lines.push(
        `| ${x.round} | ${x.position} | ${x.case} | ${x.pendingRuns} | ${x.ms} | ${x.perSec} | ${x.workerCpuUs} | ${x.redisCpuUs} | ${x.forks} |`,
      );
  }
  return lines.join('\n');
}

await runBench(main, [scratch]);
if (process.exitCode === 1) process.exit(1);
