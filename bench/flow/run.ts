// bench/flow: flow control (issue "[4/6] Flow control") — priority, per-key order, order under chaos.
//
//   node --import tsx bench/flow/run.ts          (from the repository root; builds first unless SKIP_BUILD=1)
//
// Three parts (PARTS=latency,ordered,chaos), each on its own fresh redis-server, receiver
// (`switchyard serve`) and `switchyard work` children, all on free 127.0.0.1 ports and always
// stopped (also on failure):
//
// latency — interactive latency under a low-priority backlog. The sandbox runs in this process at
//   the real clock (so away-reply's maxAge 10m never skips), burst BURST (30) per 10 s, behind a
//   thin wrapper that notes when each API call was answered. The shipped recipes (HANDLERS_DIR
//   ./handlers) with BUSINESS_HOURS open only on the weekday two days from today (UTC), so now is
//   closed and away-reply answers. BACKLOG conversation.closed deliveries (follow-up-task, low;
//   each on its own seeded contact, so its read is never a cache hit) are POSTed first and
//   dispatched; then SAMPLES inbound messages, one every SAMPLE_EVERY_MS, each on a NEW
//   conversation (`/_sandbox/inbound` with a new contact; the emitted message.received is signed
//   here and POSTed to the receiver): latency = POST of the delivery → the sandbox answered
//   away-reply's POST /conversations/{id}/messages. Also the API calls per full 10 s window from
//   the first sample to the last reply (all calls, and the backlog's alone) vs BURST. Run once per
//   VARIANTS entry: `high` (the shipped recipe) and `normal` (a copy of ./handlers in a temporary
//   directory under bench/results/ with away-reply's `priority: 'high'` removed), one after the other
//   in the same run. The backlog is not drained: the part stops after the last reply (or
//   SETTLE_MS after the last sample).
// ordered — ordered throughput. CONVERSATIONS × EVENTS message.received deliveries (body = the
//   event's seq in its conversation, created_at increasing), interleaved: round s sends seq s of
//   every conversation in a shuffled order, all POSTed as fast as the receiver takes them (16 in
//   flight, keep-alive); FLOW_WORKERS `switchyard work` with WORKER_CONCURRENCY=CONCURRENCY and
//   HANDLERS_DIR bench/flow/handlers/unordered, then /ordered (identical but `orderBy:
//   'conversation'`; no API calls; each run RPUSHes start and done to a Redis list). events/s =
//   deliveries ÷ (first POST → last handler job completed); order checked from the list.
// chaos — the ordered handler, FLOW_WORKERS workers (JOB_LOCK_DURATION=LOCK), one of them SIGKILLed
//   every KILL_EVERY_MS and a replacement started at once, FAIL_PCT % of the (conversation, seq)
//   pairs failing their first attempt (deterministic). CHAOS_CONVERSATIONS × CHAOS_EVENTS.
//   Reported: order violations (a start of seq n+1 before a done of seq n, a done out of order, two
//   runs of one conversation at once), lost runs (events without a done), duplicate completions
//   (a done written by a killed worker whose job then ran again), handler jobs failed, order
//   backlog left.
//
// Knobs: PARTS=latency,ordered,chaos SKIP_BUILD=1 RESULTS=<file.json>
//   latency: BACKLOG=5000 SAMPLES=20 SAMPLE_EVERY_MS=3000 VARIANTS=high,normal LATENCY_WORKERS=2 BURST=30 SETTLE_MS=90000
//   ordered: CONVERSATIONS=1000 EVENTS=10 FLOW_WORKERS=3 CONCURRENCY=10
//   chaos:   CHAOS_CONVERSATIONS=<CONVERSATIONS> CHAOS_EVENTS=<EVENTS> KILL_EVERY_MS=4000 FAIL_PCT=10 LOCK=2s
import { spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { jobIdFor } from '../../src/events/envelope.js';
import { EVENTS_QUEUE, HANDLER_QUEUE_BY_PRIORITY } from '../../src/queue/names.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sign } from '../../src/events/signature.js';
import {
  BIN,
  ROOT,
  build,
  cpuSeconds,
  freePort,
  httpOk,
  log,
  machine,
  machineBusy,
  pool,
  selfCpuSeconds,
  sleep,
  start,
  startRedis,
  stop,
  runBench,
  until,
  type RunningRedis,
} from '../lib/proc.js';

const num = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const PARTS = (process.env.PARTS ?? 'latency,ordered,chaos')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const BACKLOG = num('BACKLOG', 5000);
const SAMPLES = num('SAMPLES', 20);
const SAMPLE_EVERY_MS = num('SAMPLE_EVERY_MS', 3000);
const VARIANTS = (process.env.VARIANTS ?? 'high,normal')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const LATENCY_WORKERS = num('LATENCY_WORKERS', 2);
const BURST = num('BURST', 30);
const SETTLE_MS = num('SETTLE_MS', 90_000);
const CONVERSATIONS = num('CONVERSATIONS', 1000);
const EVENTS = num('EVENTS', 10);
const FLOW_WORKERS = num('FLOW_WORKERS', 3);
const CONCURRENCY = num('CONCURRENCY', 10);
const CHAOS_CONVERSATIONS = num('CHAOS_CONVERSATIONS', CONVERSATIONS);
const CHAOS_EVENTS = num('CHAOS_EVENTS', EVENTS);
const KILL_EVERY_MS = num('KILL_EVERY_MS', 4000);
const FAIL_PCT = num('FAIL_PCT', 10);
const LOCK = process.env.LOCK ?? '2s';
const WINDOW_MS = 10_000;
const SECRET = 'bench-flow-secret';
const PREFIX = 'benchflow';
const TOKEN = 'sbx_full_acme';
const LOG_KEY = 'benchflow:runs';
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-flow-'));
const tempDirs: string[] = [];
// Also on SIGINT/SIGTERM (bench/lib/proc.ts exits the process there).
process.on('exit', () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

// ---------------------------------------------------------------- shared helpers

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/** POSTs a signed delivery over a keep-alive node:http agent (the global fetch costs ~1 ms CPU each); resolves with the status. */
function post(port: number, body: Buffer): Promise<number> {
  return new Promise((res, rej) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/webhooks',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-service-signature': sign(SECRET, body) },
      },
      (r) => {
        r.resume();
        r.once('end', () => res(r.statusCode ?? 0));
      },
    );
    req.once('error', rej);
    req.end(body);
  });
}

/**
 * POSTs every delivery, `concurrency` in flight; a 503 (the receiver could not store it in time) is
 * retried after its Retry-After (at most 1 s), as a sender does. Answers: the final status of each,
 * plus `retried503` (how many 503s were answered on the way).
 */
async function postAll(port: number, bodies: Buffer[], concurrency = 16): Promise<Record<string, number>> {
  const status: Record<string, number> = {};
  await pool(bodies, concurrency, async (b) => {
    for (let attempt = 1; ; attempt++) {
      const s = await post(port, b);
      if (s === 503 && attempt < 20) {
        status.retried503 = (status.retried503 ?? 0) + 1;
        await sleep(Math.min(1000, 100 * attempt));
        continue;
      }
      status[s] = (status[s] ?? 0) + 1;
      return;
    }
  });
  return status;
}

const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);
const round = (x: number, d = 2) => Number(x.toFixed(d));

interface Stack {
  redis: RunningRedis;
  client: Redis;
  receiver: ChildProcess;
  port: number;
  common: Record<string, string>;
}

async function startStack(env: Record<string, string>): Promise<Stack> {
  const redis = await startRedis(scratch);
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  const common = { REDIS_URL: redis.url, QUEUE_PREFIX: PREFIX, LOG_LEVEL: 'warn', WEBHOOK_SECRETS: SECRET, ...env };
  const port = await freePort();
  const receiver = start('node', [BIN, 'serve'], { env: { ...common, PORT: String(port), HOST: '127.0.0.1' }, name: 'serve' });
  await until('receiver /readyz', () => httpOk(`http://127.0.0.1:${port}/readyz`), 30_000);
  return { redis, client, receiver, port, common };
}

async function stopStack(s: Stack, workers: ChildProcess[]): Promise<void> {
  await Promise.all(workers.map((w) => stop(w, 5_000)));
  await stop(s.receiver, 5_000);
  s.client.disconnect();
  await stop(s.redis.child, 5_000);
}

/** Waits until `n` workers of `queue` are connected (each `switchyard work` has one per queue). */
async function workersReady(client: Redis, queue: string, n: number): Promise<void> {
  const q = new Queue(queue, { connection: client, prefix: PREFIX });
  try {
    await until(`${n} workers on ${queue}`, async () => (await q.getWorkersCount()) >= n, 60_000, 200);
  } finally {
    await q.close();
  }
}

// ---------------------------------------------------------------- latency

interface ApiCall {
  t: number;
  method: string;
  path: string;
  status: number;
}

/** The sandbox behind a wrapper that notes when each API call was answered (Date.now() of this process). */
async function wrappedSandbox(sandbox: Sandbox): Promise<{ baseUrl: string; calls: ApiCall[]; close(): Promise<void> }> {
  const calls: ApiCall[] = [];
  return new Promise((resolve, reject) => {
    const server = serve(
      {
        port: 0,
        hostname: '127.0.0.1',
        fetch: async (req: Request) => {
          const res = await sandbox.app.fetch(req);
          const path = new URL(req.url).pathname;
          if (path.startsWith('/api/v1/')) calls.push({ t: Date.now(), method: req.method, path: path.slice(7), status: res.status });
          return res;
        },
      },
      (info) =>
        resolve({
          baseUrl: `http://127.0.0.1:${info.port}/api/v1`,
          calls,
          close: async () => {
            await sandbox.emitter.close();
            await new Promise<void>((done) => {
              if ('closeAllConnections' in server) server.closeAllConnections();
              server.close(() => done());
            });
          },
        }),
    );
    server.once('error', reject);
  });
}

const Workspaces = z.object({
  data: z.array(
    z.object({
      channels: z.array(z.object({ id: z.number(), type: z.string() })),
      teammates: z.array(z.object({ id: z.number(), active: z.boolean() })),
    }),
  ),
});
const Created = z.object({ data: z.object({ id: z.number() }) });
const InboundAnswer = z.object({ data: z.object({ conversation: z.object({ id: z.number() }), message: z.object({ id: z.number() }) }) });

/** The recipe directory of a variant: ./handlers for `high`; a copy with away-reply's priority line removed (or replaced). */
function handlersFor(variant: string): string {
  if (variant === 'high') return './handlers';
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'bench/results/flow-handlers-'));
  tempDirs.push(dir);
  cpSync(join(ROOT, 'handlers'), dir, { recursive: true });
  const file = join(dir, 'away-reply.ts');
  const src = readFileSync(file, 'utf8');
  const line = "  priority: 'high',\n";
  if (!src.includes(line)) throw new Error('handlers/away-reply.ts has no "  priority: \'high\'," line to remove');
  writeFileSync(file, src.replace(line, variant === 'normal' ? '' : `  priority: '${variant}',\n`));
  return dir;
}

async function latencyVariant(variant: string): Promise<Record<string, unknown>> {
  log(`latency [${variant}]: building the world (${BACKLOG} contacts)`);
  const sandbox = createSandbox({ burst: 1_000_000, token: TOKEN });
  const app = sandbox.app;
  const call = async (method: string, path: string, body?: unknown, auth = true): Promise<unknown> => {
    const r = await app.request(path, {
      method,
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${TOKEN}` } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const j: unknown = await r.json().catch(() => null);
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(j)}`);
    return j;
  };
  const ws = Workspaces.parse(await call('GET', '/_sandbox/workspaces', undefined, false)).data[0];
  const whatsapp = ws?.channels.find((c) => c.type === 'whatsapp')?.id;
  if (ws === undefined || whatsapp === undefined) throw new Error('the sandbox has no workspace with a whatsapp channel');
  const teammates = ws.teammates.filter((t) => t.active).map((t) => t.id);
  const contacts: number[] = [];
  await pool(
    Array.from({ length: BACKLOG }, (_, i) => i),
    8,
    async (i) => {
      contacts[i] = Created.parse(await call('POST', '/api/v1/contacts', { name: `Closer ${i}`, email: `closer${i}@bench.test` })).data.id;
    },
  );
  // The backlog: conversation.closed of a conversation per contact, closed an hour ago.
  const closedAt = Date.now() - 3_600_000;
  const backlog = contacts.map((contact, i) =>
    Buffer.from(
      JSON.stringify({
        id: `evt_benchclosed_${variant}_${i}`,
        event: 'conversation.closed',
        created_at: new Date(closedAt + i).toISOString(),
        data: {
          id: 9_000_000 + i,
          contact_id: contact,
          channel: { id: whatsapp, name: 'WhatsApp', type: 'whatsapp' },
          status: 'closed',
          subject: null,
          assignee: { type: 'user', id: teammates[i % teammates.length] },
          last_message_at: new Date(closedAt - 60_000).toISOString(),
          closed_at: new Date(closedAt + i).toISOString(),
          created_at: new Date(closedAt - 86_400_000).toISOString(),
        },
      }),
    ),
  );
  await call('POST', '/_sandbox/burst', { burst: BURST }, false);
  await call('DELETE', '/_sandbox/requests', undefined, false);
  await call('DELETE', '/_sandbox/events', undefined, false);
  const sbx = await wrappedSandbox(sandbox);

  const open = DAYS[(new Date().getUTCDay() + 2) % 7] as string;
  const businessHours = `${open} 09:00-17:00 UTC`;
  const handlersDir = handlersFor(variant);
  const stack = await startStack({
    WORKSPACE_API_URL: sbx.baseUrl,
    WORKSPACE_API_TOKEN: TOKEN,
    WORKSPACE_API_BURST: String(BURST),
    HANDLERS_DIR: handlersDir,
    FOLLOW_UP_DAYS: '2',
    BUSINESS_HOURS: businessHours,
  });
  const workers: ChildProcess[] = [];
  try {
    for (let i = 0; i < LATENCY_WORKERS; i++) workers.push(start('node', [BIN, 'work'], { env: stack.common, name: `work${i}` }));
    await workersReady(stack.client, HANDLER_QUEUE_BY_PRIORITY.low, LATENCY_WORKERS);
    await workersReady(
      stack.client,
      HANDLER_QUEUE_BY_PRIORITY[variant === 'high' ? 'high' : variant === 'low' ? 'low' : 'normal'],
      LATENCY_WORKERS,
    );

    // ---- the backlog first, dispatched into handlers-low ----
    const tB0 = Date.now();
    const status = await postAll(stack.port, backlog);
    const tPosted = Date.now();
    const events = new Queue(EVENTS_QUEUE, { connection: stack.client, prefix: PREFIX });
    await until('backlog dispatched', async () => ((await events.getJobCounts('completed')).completed ?? 0) >= BACKLOG, 300_000, 200);
    const tDispatched = Date.now();
    await events.close();
    log(`latency [${variant}]: backlog ${JSON.stringify(status)} posted in ${tPosted - tB0} ms, dispatched after ${tDispatched - tB0} ms`);

    // ---- samples: a new conversation each ----
    const samples: { conv: number; t0: number; status: number; id: string }[] = [];
    const tS0 = Date.now();
    for (let i = 0; i < SAMPLES; i++) {
      const due = tS0 + i * SAMPLE_EVERY_MS;
      if (due > Date.now()) await sleep(due - Date.now());
      const a = InboundAnswer.parse(
        await call(
          'POST',
          '/_sandbox/inbound',
          {
            contact: { name: `Sample ${variant} ${i}`, email: `sample${i}.${variant}@bench.test` },
            channel_id: whatsapp,
            body: `Hello? (${i})`,
          },
          false,
        ),
      ).data;
      const env = sandbox.emitter
        .events()
        .findLast((e) => e.event === 'message.received' && (e.data as { id?: number }).id === a.message.id);
      if (!env) throw new Error('the sandbox emitted no message.received for the sample');
      const body = Buffer.from(JSON.stringify(env));
      const t0 = Date.now();
      const s = await post(stack.port, body);
      samples.push({ conv: a.conversation.id, t0, status: s, id: env.id });
    }
    const replyOf = (conv: number) =>
      sbx.calls.find((c) => c.method === 'POST' && c.path === `/conversations/${conv}/messages` && c.status < 300);
    const tLastSample = Date.now();
    try {
      await until('every away reply', async () => samples.every((s) => replyOf(s.conv) !== undefined), SETTLE_MS, 100);
    } catch {
      log(
        `latency [${variant}]: ${samples.filter((s) => !replyOf(s.conv)).length} samples without a reply ${SETTLE_MS} ms after the last one`,
      );
    }
    const tEnd = Date.now();
    const low = new Queue(HANDLER_QUEUE_BY_PRIORITY.low, { connection: stack.client, prefix: PREFIX });
    const lowCounts = await low.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'completed', 'failed');
    await low.close();
    // Where each sample's time went, from its away-reply job: delivery POST → job added (receiver, pump,
    // dispatcher), added → a worker slot took it (queue wait), taken → the reply answered (API calls,
    // including the wait for the rate limiter).
    const awayQueue = HANDLER_QUEUE_BY_PRIORITY[variant === 'high' ? 'high' : variant === 'low' ? 'low' : 'normal'];
    const breakdown = await Promise.all(
      samples.map(async (smp) => {
        const [ts, processed] = await stack.client.hmget(
          `${PREFIX}:${awayQueue}:${jobIdFor(smp.id, 'away-reply')}`,
          'timestamp',
          'processedOn',
        );
        const reply = sbx.calls.find((c) => c.method === 'POST' && c.path === `/conversations/${smp.conv}/messages` && c.status < 300);
        const taken = processed ? Number(processed) : null; // null: no worker slot took it yet
        return {
          toJob: ts ? Number(ts) - smp.t0 : null,
          queueWait: taken === null ? null : taken - Number(ts),
          runToReply: reply && taken !== null ? reply.t - taken : null,
        };
      }),
    );
    const med = (xs: number[]) =>
      pct(
        [...xs].sort((x, y) => x - y),
        50,
      );

    // ---- figures ----
    const lat = samples.map((s) => {
      const r = replyOf(s.conv);
      return r ? r.t - s.t0 : Infinity;
    });
    const sorted = [...lat].sort((a, b) => a - b);
    const isBacklog = (c: ApiCall) =>
      (c.method === 'GET' && /^\/contacts\/\d+$/.test(c.path)) || (c.method === 'POST' && c.path === '/tasks');
    const ok = sbx.calls.filter((c) => c.status !== 429);
    const from = tS0;
    const full = Math.floor((tEnd - from) / WINDOW_MS);
    const perWindow = Array.from({ length: full }, (_, w) =>
      ok.filter((c) => c.t >= from + w * WINDOW_MS && c.t < from + (w + 1) * WINDOW_MS),
    );
    const all = perWindow.map((w) => w.length);
    const backlogOnly = perWindow.map((w) => w.filter(isBacklog).length);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const result = {
      variant,
      businessHours,
      handlersDir: variant === 'high' ? './handlers' : 'copy of ./handlers, away-reply priority removed',
      backlog: BACKLOG,
      backlogAnswers: status,
      backlogPostMs: tPosted - tB0,
      backlogDispatchedMs: tDispatched - tB0,
      samples: SAMPLES,
      sampleAnswers: samples.map((s) => s.status),
      latencyMs: lat.map((x) => (Number.isFinite(x) ? x : null)),
      p50Ms: pct(sorted, 50),
      p99Ms: pct(sorted, 99),
      maxMs: sorted.at(-1),
      replies: lat.filter(Number.isFinite).length,
      sampledFromTo: [new Date(tS0).toISOString(), new Date(tEnd).toISOString()],
      lastSampleToEndMs: tEnd - tLastSample,
      fullWindows: full,
      callsPerWindow: all,
      backlogCallsPerWindow: backlogOnly,
      meanCallsPerWindow: round(mean(all)),
      meanBacklogCallsPerWindow: round(mean(backlogOnly)),
      allCallsVsAllowed: round(mean(all) / BURST, 4),
      backlogCallsVsAllowed: round(mean(backlogOnly) / BURST, 4),
      status429: sbx.calls.filter((c) => c.status === 429).length,
      medianMs: {
        deliveryToJob: med(breakdown.map((b) => b.toJob ?? Infinity)),
        queueWait: med(breakdown.map((b) => b.queueWait ?? Infinity)),
        runStartToReply: med(breakdown.map((b) => b.runToReply ?? Infinity)),
      },
      breakdownMs: breakdown,
      lowQueueAtEnd: lowCounts,
    };
    log(
      `latency [${variant}]: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms; calls/window ${result.meanCallsPerWindow} (backlog ${result.meanBacklogCallsPerWindow}) of ${BURST}`,
    );
    return result;
  } finally {
    await stopStack(stack, workers);
    await sbx.close();
  }
}

// ---------------------------------------------------------------- ordered throughput and chaos

interface Entry {
  at: 'start' | 'done' | 'fail';
  conv: number;
  seq: number;
  attempt: number;
  pid: number;
  t: number;
}

/** Interleaved deliveries: round s sends seq s of every conversation in a shuffled order; created_at increases. */
function interleaved(convs: number, perConv: number, tag: string): Buffer[] {
  const out: Buffer[] = [];
  const base = Date.now() - 60_000;
  let rng = 42;
  const rand = () => {
    rng = (rng * 1_103_515_245 + 12_345) % 2_147_483_648;
    return rng / 2_147_483_648;
  };
  for (let seq = 1; seq <= perConv; seq++) {
    const order = Array.from({ length: convs }, (_, i) => i + 1);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    for (const conv of order) {
      const at = new Date(base + out.length).toISOString();
      out.push(
        Buffer.from(
          JSON.stringify({
            id: `evt_benchflow_${tag}_${conv}_${seq}`,
            event: 'message.received',
            created_at: at,
            data: {
              id: conv * 1000 + seq,
              conversation_id: conv,
              type: 'message',
              direction: 'inbound',
              sender_type: 'contact',
              user_id: null,
              body: String(seq),
              content_type: 'text',
              status: null,
              created_at: at,
            },
          }),
        ),
      );
    }
  }
  return out;
}

/** Checks the run log of an ordered handler. `killed`: pids SIGKILLed during the run. */
function checkOrder(entries: Entry[], convs: number, perConv: number, killed: ReadonlySet<number>) {
  const byConv = new Map<number, Entry[]>();
  for (const e of entries) byConv.set(e.conv, [...(byConv.get(e.conv) ?? []), e]);
  let violations = 0;
  let lost = 0;
  let duplicates = 0;
  let duplicatesUnexplained = 0;
  let killedRuns = 0;
  const examples: string[] = [];
  const note = (s: string) => {
    if (examples.length < 30) examples.push(s);
  };
  for (let conv = 1; conv <= convs; conv++) {
    const list = byConv.get(conv) ?? [];
    // The run in progress: started and neither done nor failed yet (a killed worker's run never ends).
    let active: Entry | null = null;
    const done = new Map<number, Entry>();
    let lastDone = 0;
    for (const e of list) {
      if (e.at === 'start') {
        if (active && !killed.has(active.pid)) {
          violations++;
          note(`conv ${conv}: seq ${e.seq} (pid ${e.pid}) started while seq ${active.seq} (pid ${active.pid}) ran`);
        }
        if (active && killed.has(active.pid)) killedRuns++;
        if (e.seq > 1 && !done.has(e.seq - 1)) {
          violations++;
          note(`conv ${conv}: seq ${e.seq} started before seq ${e.seq - 1} was done`);
        }
        active = e;
      } else {
        if (!active || active.seq !== e.seq || active.pid !== e.pid) {
          violations++;
          note(`conv ${conv}: ${e.at} of seq ${e.seq} (pid ${e.pid}) without its start`);
        }
        active = null;
        if (e.at === 'done') {
          const before = done.get(e.seq);
          if (before) {
            duplicates++;
            if (!killed.has(before.pid)) {
              duplicatesUnexplained++;
              note(`conv ${conv}: seq ${e.seq} done twice (pids ${before.pid}, ${e.pid})`);
            }
          } else {
            if (e.seq !== lastDone + 1) {
              violations++;
              note(`conv ${conv}: seq ${e.seq} done after seq ${lastDone}`);
            }
            lastDone = e.seq;
            done.set(e.seq, e);
          }
        }
      }
    }
    for (let s = 1; s <= perConv; s++)
      if (!done.has(s)) {
        lost++;
        note(`conv ${conv}: seq ${s} never done`);
      }
  }
  return { violations, lost, duplicates, duplicatesUnexplained, killedRunsRestarted: killedRuns, examples };
}

/** Conversations of an unordered run whose done records are not in seq order (what orderBy prevents). */
function outOfOrderConversations(entries: Entry[]): number {
  const last = new Map<number, number>();
  const bad = new Set<number>();
  for (const e of entries) {
    if (e.at !== 'done') continue;
    if ((last.get(e.conv) ?? 0) > e.seq) bad.add(e.conv);
    last.set(e.conv, Math.max(last.get(e.conv) ?? 0, e.seq));
  }
  return bad.size;
}

/**
 * Fan-out timing of the `events` jobs (processedOn: the dispatcher took the delivery; finishedOn: its
 * run was in the order line and the job done), as "conv/seq" → [processedOn, finishedOn].
 */
async function fanOutTimes(client: Redis, label: string, convs: number, perConv: number): Promise<Map<string, [number, number]>> {
  const p = client.pipeline();
  for (let conv = 1; conv <= convs; conv++) {
    for (let seq = 1; seq <= perConv; seq++)
      p.hmget(`${PREFIX}:${EVENTS_QUEUE}:${jobIdFor(`evt_benchflow_${label}_${conv}_${seq}`)}`, 'processedOn', 'finishedOn');
  }
  const r = (await p.exec()) ?? [];
  const out = new Map<string, [number, number]>();
  let i = 0;
  for (let conv = 1; conv <= convs; conv++) {
    for (let seq = 1; seq <= perConv; seq++) {
      const v = (r[i++]?.[1] ?? []) as (string | null)[];
      out.set(`${conv}/${seq}`, [Number(v[0]), Number(v[1])]);
    }
  }
  return out;
}

async function readLog(client: Redis): Promise<Entry[]> {
  const raw = await client.lrange(LOG_KEY, 0, -1);
  return raw.map((r) => JSON.parse(r) as Entry);
}

async function flowCase(
  kind: 'ordered' | 'unordered',
  opts: { convs: number; perConv: number; chaos: boolean },
): Promise<Record<string, unknown>> {
  const { convs, perConv, chaos } = opts;
  const n = convs * perConv;
  const label = chaos ? 'chaos' : kind;
  const stack = await startStack({ HANDLERS_DIR: `./bench/flow/handlers/${kind}`, WORKER_CONCURRENCY: String(CONCURRENCY) });
  const workerEnv = {
    ...stack.common,
    FLOW_REDIS_URL: stack.redis.url,
    FLOW_LOG_KEY: LOG_KEY,
    ...(chaos ? { FLOW_FAIL_PCT: String(FAIL_PCT), JOB_LOCK_DURATION: LOCK } : {}),
  };
  const workers: ChildProcess[] = [];
  let spawned = 0;
  const spawnWorker = () => {
    const w = start('node', [BIN, 'work'], { env: workerEnv, name: `work${spawned++}` });
    workers.push(w);
    return w;
  };
  const killed = new Set<number>();
  let killer: NodeJS.Timeout | undefined;
  try {
    for (let i = 0; i < FLOW_WORKERS; i++) spawnWorker();
    await workersReady(stack.client, HANDLER_QUEUE_BY_PRIORITY.normal, FLOW_WORKERS);
    const bodies = interleaved(convs, perConv, label);
    const handlers = new Queue(HANDLER_QUEUE_BY_PRIORITY.normal, { connection: stack.client, prefix: PREFIX });
    const live = () => workers.filter((w) => w.exitCode === null && w.signalCode === null);
    if (chaos) {
      let k = 0;
      killer = setInterval(() => {
        const alive = live();
        const victim = alive[k++ % Math.max(1, alive.length)];
        if (!victim?.pid) return;
        killed.add(victim.pid);
        victim.kill('SIGKILL');
        spawnWorker();
      }, KILL_EVERY_MS);
    }
    const cpu0 = {
      receiver: cpuSeconds(stack.receiver.pid),
      redis: cpuSeconds(stack.redis.child.pid),
      runner: selfCpuSeconds(),
      machine: machineBusy(),
    };
    const workerCpu0 = new Map(workers.map((w) => [w.pid, cpuSeconds(w.pid)] as const));
    const t0 = Date.now();
    const status = await postAll(stack.port, bodies);
    const tPosted = Date.now();
    log(`${label}: posted ${n} in ${tPosted - t0} ms ${JSON.stringify(status)}`);
    let counts: Record<string, number> = {};
    const deadline = Date.now() + (chaos ? 600_000 : 300_000);
    let lastLog = Date.now();
    for (;;) {
      counts = await handlers.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'completed', 'failed');
      if ((counts.completed ?? 0) + (counts.failed ?? 0) >= n) break;
      if (Date.now() > deadline) {
        log(`${label}: timed out: ${JSON.stringify(counts)}`);
        break;
      }
      if (Date.now() - lastLog > 15_000) {
        log(`${label}: ${Math.round((Date.now() - t0) / 1000)} s ${JSON.stringify(counts)}`);
        lastLog = Date.now();
      }
      if (!chaos && workers.some((w) => w.exitCode !== null)) throw new Error('a worker exited');
      await sleep(50);
    }
    const tDone = Date.now();
    if (killer) clearInterval(killer);
    const workerCpu = workers.reduce((a, w) => a + (cpuSeconds(w.pid) || 0) - (workerCpu0.get(w.pid) ?? 0), 0);
    const cpu1 = {
      receiver: cpuSeconds(stack.receiver.pid),
      redis: cpuSeconds(stack.redis.child.pid),
      runner: selfCpuSeconds(),
      machine: machineBusy(),
    };
    await handlers.close();
    await sleep(chaos ? 1000 : 200); // the last done records
    const entries = await readLog(stack.client);
    if (process.env.DUMP_RUNS) writeFileSync(`${process.env.DUMP_RUNS}.${label}.json`, JSON.stringify(entries));
    const backlogKeys = await stack.client.keys(`${PREFIX}:order:*:line`);
    const wall = (tDone - t0) / 1000;
    const ours = cpu1.receiver - cpu0.receiver + workerCpu + (cpu1.redis - cpu0.redis) + (cpu1.runner - cpu0.runner);
    const check = checkOrder(entries, convs, perConv, killed);
    const times = await fanOutTimes(stack.client, label, convs, perConv);
    let processedInverted = 0;
    let finishedInverted = 0;
    for (let conv = 1; conv <= convs; conv++) {
      for (let seq = 2; seq <= perConv; seq++) {
        const [p0, f0] = times.get(`${conv}/${seq - 1}`) ?? [NaN, NaN];
        const [p1, f1] = times.get(`${conv}/${seq}`) ?? [NaN, NaN];
        if (p1 < p0) processedInverted++;
        if (f1 < f0) finishedInverted++;
      }
    }
    // For the conversations with a violation: each seq's dispatch [processedOn, finishedOn] in ms after the first seq's processedOn.
    const violated = [...new Set(check.examples.map((x) => Number(/^conv (\d+)/.exec(x)?.[1])))].slice(0, 5);
    const fanOut = {
      pairsDispatchStartedOutOfOrder: processedInverted,
      pairsDispatchFinishedOutOfOrder: finishedInverted,
      violatedConversations: Object.fromEntries(
        violated.map((conv) => {
          const base = times.get(`${conv}/1`)?.[0] ?? 0;
          return [
            conv,
            Array.from({ length: Math.min(perConv, 3) }, (_, k) => (times.get(`${conv}/${k + 1}`) ?? [NaN, NaN]).map((x) => x - base)),
          ];
        }),
      ),
    };
    const result = {
      case: label,
      handler: kind,
      conversations: convs,
      eventsPerConversation: perConv,
      deliveries: n,
      answers: status,
      workers: FLOW_WORKERS,
      concurrency: CONCURRENCY,
      postMs: tPosted - t0,
      endToEndMs: tDone - t0,
      eventsPerSec: round(n / wall, 1),
      handlerJobs: counts,
      runsRecorded: entries.length,
      fanOut,
      ...(kind === 'ordered'
        ? { order: check, orderLinesLeft: backlogKeys.length }
        : { lost: check.lost, outOfOrderConversations: outOfOrderConversations(entries) }),
      ...(chaos
        ? {
            kills: killed.size,
            killEveryMs: KILL_EVERY_MS,
            failPct: FAIL_PCT,
            failedFirstAttempts: entries.filter((e) => e.at === 'fail').length,
            lock: LOCK,
          }
        : {}),
      cpuUsPerEvent: chaos
        ? 'n/a (killed workers)'
        : {
            receiver: Math.round(((cpu1.receiver - cpu0.receiver) * 1e6) / n),
            workers: Math.round((workerCpu * 1e6) / n),
            redis: Math.round(((cpu1.redis - cpu0.redis) * 1e6) / n),
            runner: Math.round(((cpu1.runner - cpu0.runner) * 1e6) / n),
          },
      otherProcessesCores: round((cpu1.machine - cpu0.machine - ours) / wall),
    };
    log(`${label}: ${result.eventsPerSec} events/s; ${JSON.stringify(kind === 'ordered' ? check : { lost: check.lost })}`);
    return result;
  } finally {
    if (killer) clearInterval(killer);
    await stopStack(stack, workers);
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  build();
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim() !== '';
  const summary: Record<string, unknown> = {
    date: new Date().toUTCString(),
    machine: machine(),
    commit: `${commit}${dirty ? ' (+ uncommitted changes)' : ''}`,
  };
  if (PARTS.includes('latency')) {
    const variants = [];
    for (const v of VARIANTS) variants.push(await latencyVariant(v));
    const [a, b] = variants as { p50Ms: number; p99Ms: number }[];
    summary.latency = {
      variants,
      ...(a && b
        ? { p99Ratio: round(b.p99Ms / a.p99Ms), p50Ratio: round(b.p50Ms / a.p50Ms), note: `${VARIANTS[1]} ÷ ${VARIANTS[0]}` }
        : {}),
    };
  }
  if (PARTS.includes('ordered')) {
    const unordered = await flowCase('unordered', { convs: CONVERSATIONS, perConv: EVENTS, chaos: false });
    const ordered = await flowCase('ordered', { convs: CONVERSATIONS, perConv: EVENTS, chaos: false });
    summary.ordered = { unordered, ordered, ratio: round((ordered.eventsPerSec as number) / (unordered.eventsPerSec as number), 3) };
  }
  if (PARTS.includes('chaos')) {
    summary.chaos = await flowCase('ordered', { convs: CHAOS_CONVERSATIONS, perConv: CHAOS_EVENTS, chaos: true });
  }
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (process.env.RESULTS) writeFileSync(process.env.RESULTS, JSON.stringify(summary, null, 2));
}

await runBench(main, [...tempDirs, scratch], () => agent.destroy());
