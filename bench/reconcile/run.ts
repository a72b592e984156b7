// bench/reconcile: what `switchyard reconcile` costs, and what it does to live traffic.
//
//   node --import tsx bench/reconcile/run.ts          (from the repository root)
//
// Part A, API calls per reconciled hour of a busy workspace (no Redis: a dry
// run, the listings only). The sandbox in this process (`createSandbox`, burst
// unlimited) lives through HOURS simulated hours (its clock moved with
// `POST /_sandbox/clock {advance_ms}` between operations, so every record has
// its own time); each hour: NEW customers write on new threads
// (`/_sandbox/inbound` with a new contact: contact.created, conversation.created,
// message.received), REPLY more inbound messages on threads of the last day,
// SEND teammate messages on threads written to this hour, CLOSE closes, LEADS
// leads created and half of them settled (won or lost). Then reconcile
// (`reconcile()` of src/reconcile, every inferable event, `sink: null`) over
// the last 1, 6 and HOURS hours: calls per listing (from the client's onCall),
// changes found per event, calls per reconciled hour, and the time those calls
// take at the budget (RECONCILE_BUDGET 0.2 of a burst of 30 and of 100).
//
// Part B, interactive latency beside reconcile (a fresh redis-server, the
// sandbox on a loopback port with burst BURST, receiver + worker in this
// process with the four shipped recipes on, BUSINESS_HOURS closed today so
// away-reply fires, WORKSPACE_API_BURST=BURST). First LOST changes are made while
// the sandbox sends nothing (its webhook URL unset: the events are lost):
// LOST/4 inbound messages on new threads, LOST/4 closes, LOST/4 contacts
// duplicating an older one's email, LOST/4 leads won. Then live traffic, RATE
// customers a second writing on new threads (away-reply, priority high):
// BASELINE_S seconds alone, then beside `reconcile` over the lost window
// (the real budgeted client on the same Redis, IngestStore sink), until reconcile
// finished and every handler job is done. Latency of a live message: from the
// `POST /_sandbox/inbound` to the away-reply's `POST …/messages` in the sandbox
// request log (same clock). Recorded: p50/p95/p99/max per phase, reconcile's
// calls and their most in any 10 s window (vs its budget), 429s.
//
// Part C, the snapshot of event fields (conversation.opened/assigned,
// contact.lifecycle_changed, lead outcomes): its API calls per hour, Redis
// bytes per record, and found = emitted after a 30-minute outage; see
// bench/reconcile/snapshot.ts.
//
// Knobs: HOURS=24 NEW=60 REPLY=180 SEND=120 CLOSE=40 LEADS=16 (part A);
//        LOST=200 RATE=1 BASELINE_S=30 BURST=100 (part B);
//        CONTACTS=10000 OPEN=2000 PENDING=200 LEADS_OPEN=500 EVERY_MIN=5 (part C; rates in snapshot.ts);
//        PART=A|B|C|AB…; RESULTS=<file.json>
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/log/logger.js';
import { ChangeClaims } from '../../src/queue/change.js';
import { IngestStore } from '../../src/queue/ingest.js';
import { EVENTS_QUEUE, HANDLER_QUEUES } from '../../src/queue/names.js';
import { reconcileClient } from '../../src/sources/reconcile/client.js';
import { reconcileBurst } from '../../src/clients/budget.js';
import { reconcile, type ReconcileReport } from '../../src/sources/reconcile/run.js';
import { startService } from '../../src/runtime/service.js';
import { startWorker, type WorkerService } from '../../src/runtime/worker.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import type { LoggedRequest } from '../../src/sandbox/request-log.js';
import { sandboxClient } from '../../src/testing/sandbox-api.js';
import { HandlerSet, handlerSnapshot } from '../../src/handler/set.js';
import { loadHandlers } from '../../src/handler/loader.js';
import { log, machine, machineBusy, sleep, startRedis, stopAll, until } from '../lib/proc.js';
import { maxInWindow } from '../lib/windows.js';
import { liveCustomers, summary } from '../lib/live.js';
import { partC } from './snapshot.js';

const env = (name: string, def: number) => Number(process.env[name] ?? def);
const PART = process.env.PART ?? 'AB';
const TOKEN = 'sbx_full_acme';
const HANDLERS = fileURLToPath(new URL('../../handlers', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-reconcile-'));

type Json = Record<string, unknown>;

/** Calls the sandbox in this process (no HTTP). */
function caller(sandbox: Sandbox) {
  return async (method: string, path: string, body?: unknown): Promise<Json> => {
    const hook = path.startsWith('/_sandbox');
    const r = await sandbox.app.fetch(
      new Request(`http://sandbox${hook ? '' : '/api/v1'}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${text.slice(0, 200)}`);
    return text ? (JSON.parse(text) as { data: Json }).data : {};
  };
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

// ───────────────────────────── part A ─────────────────────────────

async function partA(): Promise<Json> {
  const HOURS = env('HOURS', 24),
    NEW = env('NEW', 60),
    REPLY = env('REPLY', 180),
    SEND = env('SEND', 120),
    CLOSE = env('CLOSE', 40),
    LEADS = env('LEADS', 16);
  const sandbox = createSandbox({ burst: 1_000_000_000 });
  const call = caller(sandbox);
  const start = Date.parse('2026-11-16T00:00:00Z');
  await call('POST', '/_sandbox/clock', { set: new Date(start).toISOString() });
  const world = ((await call('GET', '/_sandbox/workspaces')) as unknown as Json[])[0] as { channels: { id: number; type: string }[] };
  const whatsapp = world.channels.find((c) => c.type === 'whatsapp')?.id;
  const contacts = ((await call('GET', '/contacts?per_page=100')) as unknown as { id: number }[]).map((c) => c.id);
  const threads: { id: number; at: number; open: boolean }[] = [];
  const perHour = NEW + REPLY + SEND + CLOSE + LEADS + Math.floor(LEADS / 2);
  const step = Math.floor(3_600_000 / perHour);
  let n = 0;
  const t0 = Date.now();
  log(`part A: seeding ${HOURS} h × ${perHour} operations`);
  for (let h = 0; h < HOURS; h++) {
    const hourStart = start + h * 3_600_000;
    const ops: string[] = [
      ...Array<string>(NEW).fill('new'),
      ...Array<string>(REPLY).fill('reply'),
      ...Array<string>(CLOSE).fill('close'),
      ...Array<string>(LEADS).fill('lead'),
    ].sort(() => Math.random() - 0.5);
    // Sends and settles follow what they answer: after the hour's other work, interleaved in its second half.
    ops.push(
      ...[...Array<string>(SEND).fill('send'), ...Array<string>(Math.floor(LEADS / 2)).fill('settle')].sort(() => Math.random() - 0.5),
    );
    const written: number[] = [];
    const leads: number[] = [];
    for (const op of ops) {
      await call('POST', '/_sandbox/clock', { advance_ms: step });
      const now = hourStart + (++n % perHour) * step;
      if (op === 'new') {
        const r = (await call('POST', '/_sandbox/inbound', {
          contact: { name: `Customer ${n}`, email: `c${n}@example.com` },
          channel_id: whatsapp,
          body: 'hello',
        })) as { conversation: { id: number; contact_id: number } };
        threads.push({ id: r.conversation.id, at: now, open: true });
        contacts.push(r.conversation.contact_id);
        written.push(r.conversation.id);
      } else if (op === 'reply') {
        const recent = threads.filter((t) => t.open && t.at > now - 86_400_000);
        if (recent.length === 0) continue;
        const t = pick(recent);
        await call('POST', '/_sandbox/inbound', { conversation_id: t.id, body: 'one more thing' });
        written.push(t.id);
      } else if (op === 'send') {
        if (written.length === 0) continue;
        await call('POST', `/conversations/${pick(written)}/messages`, { type: 'text', text: 'on it' });
      } else if (op === 'close') {
        const open = threads.filter((t) => t.open);
        if (open.length === 0) continue;
        const t = pick(open);
        await call('PATCH', `/conversations/${t.id}`, { status: 'closed', category: 'Resolved' });
        t.open = false;
      } else if (op === 'lead') {
        leads.push(((await call('POST', '/leads', { contact_id: pick(contacts), name: `Lead ${n}` })) as { id: number }).id);
      } else if (op === 'settle') {
        const id = leads.shift();
        if (id !== undefined) await call('POST', `/_sandbox/leads/${id}/outcome`, { outcome: Math.random() < 0.5 ? 'won' : 'lost' });
      }
    }
  }
  const end = Date.parse(((await call('GET', '/_sandbox/clock')) as { now: string }).now);
  log(
    `part A: seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s; ${threads.length} threads, ${sandbox.emitter.events().length} events emitted`,
  );
  const emitted: Record<string, number[]> = {};
  for (const e of sandbox.emitter.events()) (emitted[e.event] ??= []).push(Date.parse(e.created_at));

  const runs: Json[] = [];
  for (const hours of [1, 6, HOURS]) {
    const byOp: Record<string, number> = {};
    let calls = 0;
    const api = sandboxClient(sandbox, {
      onCall: (c) => {
        calls++;
        byOp[c.op] = (byOp[c.op] ?? 0) + 1;
      },
    });
    const since = end - hours * 3_600_000;
    const report = await reconcile({
      api,
      claims: { claimed: async (keys) => keys.map(() => false) },
      sink: null,
      window: { since, until: end + 1 },
      apiCalls: () => calls,
    });
    const emittedIn = Object.fromEntries(Object.entries(emitted).map(([k, ts]) => [k, ts.filter((t) => t >= since && t <= end).length]));
    const atBudget = (burst: number) => Math.ceil(report.apiCalls / Math.max(1, Math.floor(burst * 0.2))) * 10;
    const row = {
      hours,
      apiCalls: report.apiCalls,
      callsPerHour: +(report.apiCalls / hours).toFixed(1),
      byOp,
      found: Object.fromEntries(Object.entries(report.events).map(([k, c]) => [k, c.found])),
      emittedIn,
      secondsAtBudget: { burst30: atBudget(30), burst100: atBudget(100) },
    };
    log(
      `part A: ${hours} h → ${report.apiCalls} calls (${row.callsPerHour}/h) ${JSON.stringify(byOp)}; found ${JSON.stringify(row.found)}`,
    );
    runs.push(row);
  }
  return { hours: HOURS, perHour: { NEW, REPLY, SEND, CLOSE, LEADS, SETTLE: Math.floor(LEADS / 2) }, threads: threads.length, runs };
}

// ───────────────────────────── part B ─────────────────────────────

async function partB(): Promise<Json> {
  const LOST = env('LOST', 200),
    RATE = env('RATE', 1),
    BASELINE_S = env('BASELINE_S', 30),
    BURST = env('BURST', 100);
  const redis = await startRedis(scratch);
  const sandbox = createSandbox({ burst: 1_000_000_000, retry: { baseMs: 100, maxMs: 1000, maxAttempts: 5 } });
  const api = await sandbox.listen(0);
  const call = caller(sandbox);
  const openDay = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][(new Date().getUTCDay() + 2) % 7] as string;
  const secret = 'bench-reconcile-secret';
  const prefix = 'benchrc';
  const vars = {
    REDIS_URL: redis.url,
    QUEUE_PREFIX: prefix,
    WORKSPACE_API_URL: api.baseUrl,
    WORKSPACE_API_TOKEN: TOKEN,
    WORKSPACE_API_BURST: String(BURST),
    WEBHOOK_SECRETS: secret,
    PORT: '0',
    HOST: '127.0.0.1',
    HANDLERS_DIR: HANDLERS,
    LOG_LEVEL: 'warn',
    FOLLOW_UP_DAYS: '2',
    BUSINESS_HOURS: `${openDay} 09:00-17:00 UTC`,
    MERGE_DUPLICATES: 'true',
  };
  const config = loadConfig(vars);
  const logger = createLogger({ level: 'warn' });
  const world = ((await call('GET', '/_sandbox/workspaces')) as unknown as Json[])[0] as {
    channels: { id: number; type: string }[];
    teammates: { id: number; name: string }[];
  };
  const whatsapp = world.channels.find((c) => c.type === 'whatsapp')?.id;

  // The lost changes: made while the sandbox sends nothing.
  const lostSince = Date.now() - 1;
  const lostThreads: number[] = [];
  for (let i = 0; i < LOST / 4; i++) {
    const r = (await call('POST', '/_sandbox/inbound', {
      contact: { name: `Lost ${i}`, email: `lost${i}@example.com` },
      channel_id: whatsapp,
      body: 'are you there?',
    })) as { conversation: { id: number; contact_id: number } };
    lostThreads.push(r.conversation.id);
  }
  for (const id of lostThreads) await call('PATCH', `/conversations/${id}`, { status: 'closed', category: 'Resolved' });
  for (let i = 0; i < LOST / 4; i++) await call('POST', '/contacts', { name: `Dup ${i}`, email: `lost${i}@example.com` });
  const someContact = ((await call('GET', '/contacts?per_page=1')) as unknown as { id: number }[])[0]?.id;
  for (let i = 0; i < LOST / 4; i++) {
    const lead = (await call('POST', '/leads', { contact_id: someContact, name: `Lost lead ${i}` })) as { id: number };
    await call('POST', `/_sandbox/leads/${lead.id}/outcome`, { outcome: 'won' });
  }
  const lostUntil = Date.now() + 1;
  const lostEvents = sandbox.emitter.events().length;
  log(`part B: ${lostEvents} events lost (never sent)`);
  await call('POST', '/_sandbox/burst', { burst: BURST });
  await call('DELETE', '/_sandbox/requests');

  let worker: WorkerService | undefined;
  const service = await startService({
    config,
    log: logger,
    receiver: true,
    worker: async ({ redisUrl, queues, hooks }) => {
      const loaded = await loadHandlers(HANDLERS);
      worker = await startWorker(
        {
          config,
          redisUrl,
          log: logger,
          hooks,
          set: new HandlerSet(
            handlerSnapshot(
              loaded.map((l) => l.handler),
              undefined,
              vars,
            ),
          ),
        },
        queues,
      );
      return worker;
    },
  });
  sandbox.emitter.configure(`${service.receiver?.http.url}/webhooks`, secret);
  const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queues = [EVENTS_QUEUE, ...HANDLER_QUEUES].map((name) => new Queue(name, { connection: conn, prefix }));
  const drained = async () =>
    (await Promise.all(queues.map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children')))).every((c) =>
      Object.values(c).every((v) => v === 0),
    );

  // Live traffic: RATE new customers a second; each one's send time per conversation.
  const customers = liveCustomers(async (n) => {
    const r = (await call('POST', '/_sandbox/inbound', { contact: { name: `Live ${n}` }, channel_id: whatsapp, body: 'hello?' })) as {
      conversation: { id: number };
    };
    return r.conversation.id;
  }, RATE);
  const { sentAt } = customers;
  const latencies = async (from: number, to: number) => {
    const replies = (await call(
      'GET',
      '/_sandbox/requests?method=POST&path=/conversations/*/messages&status=201',
    )) as unknown as LoggedRequest[];
    const out: number[] = [];
    for (const r of replies) {
      const id = Number(/^\/conversations\/(\d+)\/messages$/.exec(r.path)?.[1]);
      const t0 = sentAt.get(id);
      if (t0 !== undefined && t0 >= from && t0 < to) out.push(Date.parse(r.time) - t0);
    }
    return out;
  };

  const busy0 = machineBusy();
  const b0 = Date.now();
  log(`part B: baseline, live traffic alone for ${BASELINE_S} s`);
  await sleep(BASELINE_S * 1000);
  const b1 = Date.now();

  log('part B: reconcile over the lost window beside live traffic');
  const callTimes: number[] = [];
  const client = reconcileClient(config, conn, () => {
    callTimes.push(Date.now());
  });
  if (!client) throw new Error('no API configured');
  const r0 = Date.now();
  const report: ReconcileReport = await reconcile({
    api: client,
    claims: new ChangeClaims(conn, prefix, config.dedupeTtlMs),
    sink: new IngestStore(conn, prefix, config.dedupeTtlMs),
    window: { since: lostSince, until: lostUntil },
    apiCalls: () => callTimes.length,
  });
  const r1 = Date.now();
  log(
    `part B: reconcile done in ${((r1 - r0) / 1000).toFixed(1)} s: ${report.totals.found} found, ${report.totals.enqueued} enqueued, ${report.apiCalls} calls`,
  );
  await until(
    'reconciled runs done',
    async () => {
      await sleep(500);
      return drained();
    },
    900_000,
    1000,
  );
  const r2 = Date.now();
  // A few seconds more of live traffic, then let its last replies land.
  await sleep(3000);
  await customers.stop();
  await sleep(3000);
  const busy = (machineBusy() - busy0) / ((Date.now() - b0) / 1000);

  const baseline = await latencies(b0, b1);
  const during = await latencies(r0, r2);
  const all = (await call('GET', '/_sandbox/requests')) as unknown as LoggedRequest[];
  const tooMany = all.filter((r) => r.status === 429).length;
  const writes = all.filter((r) => r.method !== 'GET' && r.status < 300).length;
  const result = {
    lost: lostEvents,
    rate: RATE,
    burst: BURST,
    budgetPer10s: reconcileBurst(config),
    reconcile: {
      seconds: +((r1 - r0) / 1000).toFixed(1),
      apiCalls: report.apiCalls,
      maxIn10s: maxInWindow(callTimes, 10_000),
      totals: report.totals,
      events: report.events,
    },
    reconciledRunsDrainedSeconds: +((r2 - r0) / 1000).toFixed(1),
    awayReplyLatencyMs: { baseline: summary(baseline), duringReconcile: summary(during) },
    sandbox: { requests: all.length, writes, status429: tooMany },
    otherCoresBusy: +busy.toFixed(2),
  };
  log(`part B: ${JSON.stringify(result.awayReplyLatencyMs)}`);
  log('part B: closing');
  await Promise.allSettled(queues.map((q) => q.close()));
  conn.disconnect();
  await service.close();
  log('part B: service closed');
  sandbox.emitter.configure(null, null);
  await api.close();
  return result;
}

async function main(): Promise<void> {
  const out: Json = { date: new Date().toUTCString(), machine: machine() };
  try {
    if (PART.includes('A')) out['partA'] = await partA();
    if (PART.includes('B')) out['partB'] = await partB();
    if (PART.includes('C')) out['partC'] = await partC(scratch, caller);
  } finally {
    await stopAll();
    rmSync(scratch, { recursive: true, force: true });
  }
  const text = JSON.stringify(out, null, 2);
  console.log(text);
  if (process.env.RESULTS) writeFileSync(process.env.RESULTS, text);
  // Handles of the in-process service may linger (keep-alive sockets): the figures are out, end here.
  process.exit(process.exitCode ?? 0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
