// bench/pipeline: deliveries of mixed events through receiver → workers → sandbox.
//
//   node --import tsx bench/pipeline/run.ts          (from the repository root)
//
// One run:
//   - a fresh redis-server (AOF everysec) started here;
//   - the sandbox in this process (`createSandbox`, full token sbx_full_acme),
//     first with an unlimited burst to build the world, then `POST
//     /_sandbox/burst {burst: BURST}` (100, which also resets the windows) and
//     the request and event logs cleared before the measurement;
//   - `switchyard serve` (receiver; INGEST_PUMP=auto, i.e. no pump in it) and
//     WORKERS × `switchyard work` (HANDLERS_DIR=./handlers, the four shipped
//     recipes on: FOLLOW_UP_DAYS=2, BUSINESS_HOURS=Mon-Fri 09:00-17:00 UTC with
//     the sandbox clock set to a Sunday night so away-reply fires,
//     MERGE_DUPLICATES=true, WORKSPACE_API_BURST=BURST).
// Deliveries are the sandbox's own emitted envelopes (real ids): message.received
// (inbound on a new thread), conversation.closed (PATCH status closed),
// lead.won (POST /leads + outcome hook), contact.created (POST /contacts; half
// of them duplicate the email of an older contact so merge-duplicates merges),
// N/4 of each, shuffled, signed with the receiver's secret (src/events/signature.ts
// `sign`) and POSTed as fast as the receiver takes them (the backlog). The run
// ends when every handlers job completed or failed.
//
// Recorded: end-to-end events/s, backlog drain time, API calls per event per
// recipe (grouped by method + path from the sandbox request log), calls per
// fixed 10 s window while the backlog exists vs BURST, 429s, CPU µs per event
// of each process.
//
// Knobs: DELIVERIES=2000 BURST=100 WORKERS=2 SKIP_BUILD=1 RESULTS=<file.json>
//        CONCURRENCY=<WORKER_CONCURRENCY of each worker, default 10>
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { createSandbox } from '../../src/sandbox/index.js';
import type { LoggedRequest } from '../../src/sandbox/request-log.js';
import { sign } from '../../src/events/signature.js';
import { HANDLER_QUEUES } from '../../src/queue/names.js';
import {
  BIN,
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
  stopAll,
  until,
} from '../lib/proc.js';
import { maxInWindow } from '../lib/windows.js';

const N = Number(process.env.DELIVERIES ?? 2000);
const BURST = Number(process.env.BURST ?? 100);
const WORKERS = Number(process.env.WORKERS ?? 2);
const WINDOW_MS = 10_000;
const SECRET = 'bench-pipeline-secret';
const PREFIX = 'benchpipe';
const TOKEN = 'sbx_full_acme';
const BUSINESS_HOURS = 'Mon-Fri 09:00-17:00 UTC';
const CLOSED_AT = '2026-11-22T03:00:00.000Z'; // a Sunday night: outside business hours

const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-pipeline-'));

/** Job counts of several queues added up by state. */
function sumCounts(all: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of all) for (const [k, v] of Object.entries(c)) out[k] = (out[k] ?? 0) + v;
  return out;
}

type Ev = { id: string; event: string; created_at: string; data: Record<string, unknown> };

/** Which recipe a logged API call belongs to (each recipe uses its own endpoints). */
function recipeOf(e: LoggedRequest): string {
  const p = e.path;
  if (e.method === 'GET' && /^\/contacts\/\d+$/.test(p)) return 'follow-up-task';
  if (e.method === 'POST' && p === '/tasks') return 'follow-up-task';
  if (e.method === 'PUT' && /^\/contacts\/\d+\/lifecycle$/.test(p)) return 'lead-won';
  if (e.method === 'POST' && /^\/contacts\/\d+\/labels$/.test(p)) return 'lead-won';
  if (/^\/conversations\/\d+\/messages$/.test(p)) return 'away-reply';
  if (e.method === 'GET' && p === '/contacts') return 'merge-duplicates';
  if (e.method === 'POST' && p === '/contacts/merge') return 'merge-duplicates';
  return 'other';
}

function opName(e: LoggedRequest): string {
  const q = Object.keys(e.query ?? {})
    .filter((k) => k !== 'per_page')
    .sort();
  return `${e.method} ${e.path.replace(/\/\d+/g, '/{id}')}${q.length ? `?${q.join('&')}` : ''}`;
}

/** INFO commandstats → {command: calls}. */
async function commandStats(r: Redis): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await r.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) out[m[1] as string] = Number(m[2]);
  return out;
}

/** Redis commands issued during the measurement, per delivery, the busiest first. */
function commandDelta(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(b)
      .map(([k, v]) => [k, v - (a[k] ?? 0)] as const)
      .filter(([, v]) => v > 0)
      .sort((x, y) => y[1] - x[1])
      .slice(0, 10)
      .map(([k, v]) => [k, Number((v / N).toFixed(1))]),
  );
}

// The parts of the sandbox's answers that the world-building reads.
const Workspaces = z.object({
  data: z.array(
    z.object({
      channels: z.array(z.object({ id: z.number(), type: z.string() })),
      teammates: z.array(z.object({ id: z.number(), active: z.boolean() })),
    }),
  ),
});
const Inbound = z.object({ data: z.object({ conversation: z.object({ id: z.number(), contact_id: z.number() }) }) });
const Created = z.object({ data: z.object({ id: z.number() }) });

async function main(): Promise<void> {
  build();
  const redis = await startRedis(scratch);
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  const sandbox = createSandbox({ burst: 1_000_000, token: TOKEN });
  const sbx = await sandbox.listen(0);
  try {
    // ---- the world, built with an unlimited burst ----
    const api = async (method: string, path: string, body?: unknown): Promise<unknown> => {
      const r = await fetch(`${sbx.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const j: unknown = await r.json();
      if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(j)}`);
      return j;
    };
    const hook = async (method: string, path: string, body?: unknown): Promise<unknown> => {
      const r = await fetch(`${sbx.url}/_sandbox${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const j: unknown = await r.json().catch(() => null);
      if (r.status >= 300) throw new Error(`hook ${method} ${path} → ${r.status} ${JSON.stringify(j)}`);
      return j;
    };
    await hook('POST', '/clock', { set: CLOSED_AT });
    const ws = Workspaces.parse(await hook('GET', '/workspaces')).data[0];
    const whatsapp = ws?.channels.find((c) => c.type === 'whatsapp')?.id;
    if (ws === undefined || whatsapp === undefined) throw new Error('the sandbox has no workspace with a whatsapp channel');
    const teammates = ws.teammates.filter((t) => t.active).map((t) => t.id);
    const quarter = Math.ceil(N / 4);
    log(`building the world: ${quarter} of each event`);
    const tag = Date.now().toString(36);
    // message.received: a customer writes on a new thread (one contact each).
    await pool(
      Array.from({ length: quarter }, (_, i) => i),
      8,
      async (i) => {
        await hook('POST', '/inbound', {
          contact: { name: `Inbound ${i}`, email: `in${i}.${tag}@bench.test` },
          channel_id: whatsapp,
          body: `Hello, order ${i}?`,
        });
      },
    );
    // conversation.closed: another thread per contact, closed by a teammate.
    const closers: number[] = [];
    await pool(
      Array.from({ length: quarter }, (_, i) => i),
      8,
      async (i) => {
        const r = await hook('POST', '/inbound', {
          contact: { name: `Closer ${i}`, email: `close${i}.${tag}@bench.test` },
          channel_id: whatsapp,
          body: 'Thanks, all good',
        });
        const conv = Inbound.parse(r).data.conversation;
        closers.push(conv.contact_id);
        await api('PATCH', `/conversations/${conv.id}`, {
          status: 'closed',
          assignee: { type: 'user', id: teammates[i % teammates.length] },
        });
      },
    );
    // lead.won: a lead per "closer" contact, won.
    await pool(closers.slice(0, quarter), 8, async (contactId, i) => {
      const lead = Created.parse(await api('POST', '/leads', { contact_id: contactId, name: `Deal ${i}`, value: 100 + i })).data;
      await hook('POST', `/leads/${lead.id}/outcome`, { outcome: 'won' });
    });
    // contact.created: half duplicate an inbound contact's email (merge), half new (with a phone).
    await pool(
      Array.from({ length: quarter }, (_, i) => i),
      8,
      async (i) => {
        const body =
          i % 2 === 0
            ? { name: `Dup ${i}`, email: `in${i}.${tag}@bench.test` }
            : { name: `New ${i}`, email: `new${i}.${tag}@bench.test`, phone: `+2010${String(1_000_000 + i).padStart(8, '0')}` };
        await api('POST', '/contacts', body);
      },
    );
    const wanted = new Set(['message.received', 'conversation.closed', 'lead.won', 'contact.created']);
    const all = sandbox.emitter.events() as unknown as Ev[];
    // contact.created of the inbound/closer contacts are not part of the mix: only those of POST /contacts.
    const byEvent = new Map<string, Ev[]>();
    for (const e of all) {
      if (!wanted.has(e.event)) continue;
      if (e.event === 'contact.created' && !/^(Dup|New) /.test(String(e.data.name))) continue;
      byEvent.set(e.event, [...(byEvent.get(e.event) ?? []), e]);
    }
    const mix: Ev[] = [];
    for (const name of wanted) mix.push(...(byEvent.get(name) ?? []).slice(0, quarter));
    mix.splice(N);
    for (let i = mix.length - 1; i > 0; i--) {
      // deterministic shuffle
      const j = (i * 7919 + 13) % (i + 1);
      [mix[i], mix[j]] = [mix[j] as Ev, mix[i] as Ev];
    }
    const perEvent = Object.fromEntries([...wanted].map((n) => [n, mix.filter((e) => e.event === n).length]));
    log(`deliveries: ${mix.length} ${JSON.stringify(perEvent)}`);
    const bodies = mix.map((e) => Buffer.from(JSON.stringify(e)));

    // ---- measurement state: rate limit back to BURST, logs cleared ----
    await hook('POST', '/burst', { burst: BURST });
    await hook('DELETE', '/requests');
    await hook('DELETE', '/events');

    // ---- processes ----
    const common = {
      REDIS_URL: redis.url,
      QUEUE_PREFIX: PREFIX,
      LOG_LEVEL: 'warn',
      WEBHOOK_SECRETS: SECRET,
      WORKSPACE_API_URL: sbx.baseUrl,
      WORKSPACE_API_TOKEN: TOKEN,
      WORKSPACE_API_BURST: String(BURST),
      HANDLERS_DIR: './handlers',
      FOLLOW_UP_DAYS: '2',
      BUSINESS_HOURS,
      MERGE_DUPLICATES: 'true',
      ...(process.env.CONCURRENCY ? { WORKER_CONCURRENCY: process.env.CONCURRENCY } : {}),
    };
    const port = await freePort();
    const receiver = start('node', [BIN, 'serve'], { env: { ...common, PORT: String(port), HOST: '127.0.0.1' }, name: 'serve' });
    await until('receiver /readyz', () => httpOk(`http://127.0.0.1:${port}/readyz`));
    const workers = Array.from({ length: WORKERS }, (_, i) => start('node', [BIN, 'work'], { env: common, name: `work${i}` }));
    await sleep(3000); // workers load handlers and connect
    for (const w of workers) if (w.exitCode !== null) throw new Error('a worker exited at start-up');

    // Collect the request log as it grows (it keeps the last 5 000 entries only).
    const calls: LoggedRequest[] = [];
    let lastSeq = 0;
    const collect = () => {
      for (const e of sandbox.state.log.list())
        if (e.seq > lastSeq) {
          calls.push(e);
          lastSeq = e.seq;
        }
    };
    const collector = setInterval(collect, 500);

    const stats0 = await commandStats(client);
    const cpu0 = {
      receiver: cpuSeconds(receiver.pid),
      workers: workers.map((w) => cpuSeconds(w.pid)),
      redis: cpuSeconds(redis.child.pid),
      runner: selfCpuSeconds(),
      machine: machineBusy(),
    };
    const t0 = Date.now();
    const status: Record<number, number> = {};
    await pool(bodies, 16, async (body) => {
      const r = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(SECRET, body) },
      });
      await r.arrayBuffer();
      status[r.status] = (status[r.status] ?? 0) + 1;
    });
    const tSent = Date.now();
    log(`sent ${bodies.length} in ${tSent - t0} ms: ${JSON.stringify(status)}`);

    // ---- wait for the drain (bounded) ----
    const events = new Queue('events', { connection: client, prefix: PREFIX });
    // Handler runs are in one queue per priority (the recipes: away-reply high, lead-won normal, the others low).
    const handlerQueues = HANDLER_QUEUES.map((name) => new Queue(name, { connection: client, prefix: PREFIX }));
    const accepted = status[202] ?? 0;
    const deadline = Date.now() + Math.max(120_000, ((accepted * 3) / BURST) * WINDOW_MS * 2);
    let last = '';
    let ec: Record<string, number> = {};
    let hc: Record<string, number> = {};
    for (;;) {
      ec = await events.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'completed', 'failed');
      hc = sumCounts(
        await Promise.all(handlerQueues.map((q) => q.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'completed', 'failed'))),
      );
      const inbox = await client.llen(`${PREFIX}:ingest:inbox`);
      const eventsDone = (ec.completed ?? 0) + (ec.failed ?? 0);
      const pendingH = (hc.wait ?? 0) + (hc.active ?? 0) + (hc.delayed ?? 0) + (hc.prioritized ?? 0);
      if (inbox === 0 && eventsDone >= accepted && pendingH === 0) break;
      const line = `inbox ${inbox} events ${JSON.stringify(ec)} handlers ${JSON.stringify(hc)}`;
      if (Date.now() - t0 > 0 && (Date.now() - t0) % 30_000 < 1000 && line !== last) {
        log(`${Math.round((Date.now() - t0) / 1000)} s: ${line}`);
        last = line;
      }
      if (Date.now() > deadline) throw new Error(`drain timed out: ${line}`);
      if (workers.some((w) => w.exitCode !== null)) throw new Error('a worker exited');
      await sleep(200);
    }
    const tDone = Date.now();
    const cpu1 = {
      receiver: cpuSeconds(receiver.pid),
      workers: workers.map((w) => cpuSeconds(w.pid)),
      redis: cpuSeconds(redis.child.pid),
      runner: selfCpuSeconds(),
      machine: machineBusy(),
    };
    clearInterval(collector);
    collect();
    await events.close();
    await Promise.all(handlerQueues.map((q) => q.close()));
    await Promise.all(workers.map((w) => stop(w)));
    await stop(receiver);

    // ---- analysis ----
    const apiCalls = calls.filter((c) => c.token?.label === 'full');
    const times = apiCalls
      .filter((c) => c.status !== 429)
      .map((c) => Date.parse(c.time))
      .sort((a, b) => a - b);
    // Log times are on the sandbox clock (set to CLOSED_AT, then running): windows are taken between the
    // first and the last API call, i.e. while the backlog existed (the last call is the last job's).
    const first = times[0] ?? 0;
    const lastCall = times.at(-1) ?? 0;
    const drainMs = tDone - t0;
    const fullWindows = Math.floor((lastCall - first) / WINDOW_MS);
    const perWindow = Array.from(
      { length: fullWindows },
      (_, w) => times.filter((t) => t >= first + w * WINDOW_MS && t < first + (w + 1) * WINDOW_MS).length,
    );
    const meanPerWindow = perWindow.reduce((a, b) => a + b, 0) / Math.max(1, perWindow.length);
    const maxSliding = maxInWindow(times, WINDOW_MS);
    const recipes: Record<string, { events: number; calls: number; perEvent: number; ops: Record<string, number> }> = {};
    const eventOf: Record<string, string> = {
      'follow-up-task': 'conversation.closed',
      'lead-won': 'lead.won',
      'away-reply': 'message.received',
      'merge-duplicates': 'contact.created',
    };
    for (const c of apiCalls) {
      const r = recipeOf(c);
      const slot = (recipes[r] ??= { events: perEvent[eventOf[r] ?? ''] ?? 0, calls: 0, perEvent: 0, ops: {} });
      slot.calls++;
      const op = `${opName(c)} ${c.status}${c.replay ? ' (replay)' : ''}`;
      slot.ops[op] = (slot.ops[op] ?? 0) + 1;
    }
    for (const r of Object.values(recipes)) r.perEvent = r.events ? Number((r.calls / r.events).toFixed(3)) : NaN;
    const wall = (tDone - t0) / 1000;
    const us = (s: number) => Number(((s * 1e6) / accepted).toFixed(0));
    const workerCpu = cpu1.workers.reduce((a, b, i) => a + b - (cpu0.workers[i] as number), 0);
    const ours = cpu1.receiver - cpu0.receiver + workerCpu + (cpu1.redis - cpu0.redis) + (cpu1.runner - cpu0.runner);
    const summary = {
      date: new Date().toUTCString(),
      machine: machine(),
      deliveries: mix.length,
      perEvent,
      answers: status,
      workers: WORKERS,
      burst: BURST,
      sendMs: tSent - t0,
      drainMs,
      eventsPerSec: Number((accepted / wall).toFixed(2)),
      apiCalls: apiCalls.length,
      status429: apiCalls.filter((c) => c.status === 429).length,
      callsPerEvent: Number((apiCalls.length / accepted).toFixed(3)),
      perWindow,
      meanPerWindow: Number(meanPerWindow.toFixed(2)),
      ratioToAllowed: Number((meanPerWindow / BURST).toFixed(4)),
      maxSlidingWindow: maxSliding,
      firstToLastCallMs: lastCall - first,
      overallCallRatio: Number((times.length / ((lastCall - first) / WINDOW_MS) / BURST).toFixed(4)),
      redisCommands: commandDelta(stats0, await commandStats(client)),
      recipes,
      jobs: { events: ec, handlers: hc },
      cpuUsPerEvent: {
        receiver: us(cpu1.receiver - cpu0.receiver),
        workers: us(workerCpu),
        redis: us(cpu1.redis - cpu0.redis),
        runnerAndSandbox: us(cpu1.runner - cpu0.runner),
      },
      otherProcessesCores: Number(((cpu1.machine - cpu0.machine - ours) / wall).toFixed(2)),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    if (process.env.RESULTS) writeFileSync(process.env.RESULTS, JSON.stringify(summary, null, 2));
    if ((ec.failed ?? 0) + (hc.failed ?? 0) > 0 || accepted !== mix.length) process.exitCode = 1;
  } finally {
    client.disconnect();
    await sbx.close();
    await stopAll();
  }
}

await runBench(main, [scratch]);
