// bench/rerun: `switchyard rerun` of N deliveries of a handler making one API call each (bulk-note, a note
// per closed conversation), at WORKSPACE_API_BURST=BURST with RERUN_SHARE=SHARE, while live inbound
// messages arrive (RATE new customers a second, the shipped away-reply at priority high, 2 calls each:
// at the default 0.5 a second, 10 calls per 10 s, so live traffic and the share fit in the burst).
//
// Processes: a fresh redis-server; the sandbox in this process on a loopback port; `switchyard serve`
// and WORKERS × `switchyard work` (the built CLI). Phase 0: N conversation.closed deliveries (each its
// own closed_at, so each its own change) are signed and posted, and run once with the API unthrottled
// (the originals). Phase 1: the sandbox's burst and the workers' WORKSPACE_API_BURST become BURST;
// BASELINE_S of live traffic alone; then `switchyard rerun --handler bulk-note --yes --detach` (the
// built CLI) and live traffic until the batch is done. KILL=1: the worker feeding the batch is SIGKILLed
// once half of it is done, and a new one started.
//
// Reported: the re-runs' calls per 10 s over the batch (first to last call) against their share
// (BURST × SHARE), the most in any 10 s, live away-reply latency (inbound → its send in the sandbox
// log) alone and during the batch, 429s, and exactly once: fresh (not replayed) note writes per
// delivery in phase 1 (each must be 1).
//
// Knobs: N=5000 BURST=30 SHARE=0.5 RATE=0.5 BASELINE_S=20 WORKERS=2 KILL=0 SKIP_BUILD=1 RESULTS=out.json
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { sign } from '../../src/events/signature.js';
import { buildDelivery } from '../../src/replay/build.js';
import { rerunStatus, type RerunStatus } from '../../src/rerun/batch.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { BIN, build, freePort, log, machine, pool, sleep, start, startRedis, stop, stopAll, until, httpOk } from '../lib/proc.js';
import { maxInWindow } from '../lib/windows.js';
import { liveCustomers, summary } from '../lib/live.js';
import { harvester } from '../lib/request-log.js';

const env = (name: string, def: number) => Number(process.env[name] ?? def);
const N = env('N', 5000);
const BURST = env('BURST', 30);
const SHARE = env('SHARE', 0.5);
const RATE = env('RATE', 0.5);
const BASELINE_S = env('BASELINE_S', 20);
const WORKERS = env('WORKERS', 2);
const KILL = env('KILL', 0) === 1;
const TOKEN = 'sbx_full_acme';
const SECRET = 'bench-rerun-secret';
const PREFIX = 'benchrr';
const HANDLERS = fileURLToPath(new URL('./handlers', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-rerun-'));

async function main(): Promise<void> {
  build();
  const out: Record<string, unknown> = { date: new Date().toUTCString(), machine: machine(), N, BURST, SHARE, RATE, WORKERS, KILL };
  const redis = await startRedis(scratch);
  const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
  const sandbox = createSandbox({ burst: 1_000_000_000, retry: { baseMs: 100, maxMs: 1000, maxAttempts: 5 } });
  const api = await sandbox.listen(0);
  const call = async (method: string, path: string, body?: unknown) => {
    const hook = path.startsWith('/_sandbox');
    const r = await fetch(`${hook ? api.url : api.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${text.slice(0, 200)}`);
    return text ? (JSON.parse(text) as { data?: unknown }) : {};
  };
  const log_ = harvester(() => sandbox.state.log.list());
  const world = ((await call('GET', '/_sandbox/workspaces')).data as { channels: { id: number; type: string }[] }[])[0];
  const channel = world?.channels.find((c) => c.type === 'whatsapp')?.id;
  const openDay = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][(new Date().getUTCDay() + 2) % 7] as string;
  const port = await freePort();
  const common = {
    REDIS_URL: redis.url,
    QUEUE_PREFIX: PREFIX,
    WORKSPACE_API_URL: api.baseUrl,
    WORKSPACE_API_TOKEN: TOKEN,
    HANDLERS_DIR: HANDLERS,
    LOG_LEVEL: 'warn',
    BUSINESS_HOURS: `${openDay} 09:00-17:00 UTC`,
    RERUN_SHARE: String(SHARE),
    JOB_LOCK_DURATION: '5s',
  };
  const receiver = start(process.execPath, [BIN, 'serve'], {
    name: 'serve',
    env: { ...common, WEBHOOK_SECRETS: SECRET, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    keepStdout: true,
  });
  await until('receiver', () => httpOk(`http://127.0.0.1:${port}/healthz`), 30_000, 200);
  const url = `http://127.0.0.1:${port}/webhooks`;
  const worker = (burst: number, name: string): ChildProcess =>
    start(process.execPath, [BIN, 'work'], { name, env: { ...common, WORKSPACE_API_BURST: String(burst) } });

  // Phase 0: the originals, with the API unthrottled.
  const convs = ((await call('GET', '/conversations?per_page=100')).data as { id: number }[]).map((c) => c.id);
  const first = worker(10_000, 'work-0');
  const base = Date.now() - 86_400_000;
  const ids: string[] = [];
  await pool(
    Array.from({ length: N }, (_, i) => i),
    16,
    async (i) => {
      const closedAt = new Date(base + i * 1000).toISOString();
      const built = buildDelivery('conversation.closed', { sets: [`data.id=${convs[i % convs.length]}`, `data.closed_at=${closedAt}`] });
      ids.push(built.key);
      const r = await fetch(url, {
        method: 'POST',
        body: built.bytes,
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(SECRET, built.bytes) },
      });
      if (r.status !== 202) throw new Error(`delivery ${i}: ${r.status} ${await r.text()}`);
    },
  );
  const bulkWrites = (from: number) =>
    log_
      .entries()
      .filter(
        (e) =>
          e.seq > from && e.method === 'POST' && /\/notes$/.test(e.path) && String((e.body as { body?: string })?.body).startsWith('bulk '),
      );
  await until('originals written', async () => (log_.harvest(), bulkWrites(0).length >= N), 1_800_000, 500);
  log(`phase 0: ${N} originals written`);
  await stop(first);
  await sleep(500);

  // Phase 1: at BURST, live traffic, then the rerun beside it.
  log_.harvest();
  const seq0 = Math.max(0, ...log_.entries().map((e) => e.seq));
  await call('POST', '/_sandbox/burst', { burst: BURST });
  sandbox.emitter.configure(url, SECRET);
  const workers = Array.from({ length: WORKERS }, (_, i) => worker(BURST, `work-${i + 1}`));
  await sleep(5_000);
  const customers = liveCustomers(async (n) => {
    const r = (await call('POST', '/_sandbox/inbound', { contact: { name: `Live ${n}` }, channel_id: channel, body: 'hello?' }).catch(
      () => ({}),
    )) as { data?: { conversation?: { id: number } } };
    return r.data?.conversation?.id;
  }, RATE);
  const { sentAt } = customers;
  const b0 = Date.now();
  await sleep(BASELINE_S * 1000);
  const b1 = Date.now();
  log(`phase 1: baseline done; starting the rerun of ${N}`);
  const cli = start(process.execPath, [BIN, 'rerun', '--handler', 'bulk-note', '--yes', '--detach'], {
    name: 'rerun',
    env: { ...common, WORKSPACE_API_BURST: String(BURST) },
    keepStdout: true,
  });
  let cliOut = '';
  cli.stdout?.on('data', (d: Buffer) => (cliOut += d.toString()));
  await new Promise((r) => cli.once('exit', r));
  const batch = /started (rr-[0-9a-z]+-[0-9a-f]{4})/.exec(cliOut)?.[1];
  if (!batch) throw new Error(`no batch started:\n${cliOut}`);
  log(cliOut.trim());
  const r0 = Date.now();
  let killed: Record<string, unknown> | null = null;
  let s: RerunStatus = await rerunStatus({ redis: conn, prefix: PREFIX }, batch);
  while (s.state !== 'done' && s.state !== 'cancelled') {
    await sleep(1000);
    s = await rerunStatus({ redis: conn, prefix: PREFIX }, batch);
    if (KILL && !killed && s.done >= N / 2) {
      const pid = Number((await conn.get(`${PREFIX}:rerun:b:${batch}:lease`))?.split(':')[0]);
      const victim = workers.find((w) => w.pid === pid);
      victim?.kill('SIGKILL');
      killed = { at: s.done, pid, found: victim !== undefined, s: (Date.now() - r0) / 1000 };
      workers.push(worker(BURST, 'work-new'));
      log(`killed the feeding worker ${pid} at ${s.done} done`);
    }
    if (Math.round((Date.now() - r0) / 1000) % 30 === 0) log(`${s.done} done, ${s.failed} failed of ${s.total}`);
  }
  const r1 = Date.now();
  await sleep(3_000);
  await customers.stop();
  await sleep(3_000);
  log_.harvest();
  log_.stop();

  const entries = log_.entries().filter((e) => e.seq > seq0);
  const replies = entries.filter((e) => e.method === 'POST' && /^\/conversations\/\d+\/messages$/.test(e.path) && e.status === 201);
  const latency = (from: number, to: number) =>
    replies.flatMap((e) => {
      const t0 = sentAt.get(Number(/(\d+)\/messages$/.exec(e.path)?.[1]));
      return t0 !== undefined && t0 >= from && t0 < to ? [Date.parse(e.time) - t0] : [];
    });
  const rerunCalls = bulkWrites(seq0);
  const times = rerunCalls.map((e) => Date.parse(e.time)).sort((a, b) => a - b);
  const span = ((times[times.length - 1] ?? 0) - (times[0] ?? 0)) / 1000;
  const share = Math.max(1, Math.floor(BURST * SHARE));
  // Use of the share: calls in each whole 10 s window from the first call (the last, partial window left out).
  const windows: number[] = [];
  for (let t = times[0] ?? 0; t + 10_000 <= (times[times.length - 1] ?? 0); t += 10_000) {
    windows.push(times.filter((x) => x >= t && x < t + 10_000).length);
  }
  const meanWindow = windows.reduce((a, b) => a + b, 0) / Math.max(1, windows.length);
  const fresh = new Map<string, number>();
  for (const e of rerunCalls) {
    if (e.status !== 201 || e.replay) continue;
    const id = String((e.body as { body: string }).body).slice(5);
    fresh.set(id, (fresh.get(id) ?? 0) + 1);
  }
  const result = {
    batch: { id: batch, done: s.done, failed: s.failed, total: s.total, seconds: +((r1 - r0) / 1000).toFixed(1) },
    rerunCalls: {
      total: rerunCalls.length,
      spanSeconds: +span.toFixed(1),
      share,
      wholeWindows: windows.length,
      meanPer10s: +meanWindow.toFixed(2),
      minPer10s: Math.min(...windows),
      useOfShare: +(meanWindow / share).toFixed(3),
      maxIn10s: maxInWindow(times, 10_000),
    },
    awayReplyLatencyMs: { baseline: summary(latency(b0, b1)), duringRerun: summary(latency(r0, r1)) },
    exactlyOnce: {
      deliveries: ids.length,
      writtenOnce: ids.filter((id) => fresh.get(id) === 1).length,
      missing: ids.filter((id) => !fresh.has(id)).length,
      twice: [...fresh.values()].filter((v) => v > 1).length,
      replays: rerunCalls.filter((e) => e.replay).length,
    },
    status429: entries.filter((e) => e.status === 429).length,
    killed,
    requestLogGap: log_.gap(),
  };
  Object.assign(out, result);
  const text = JSON.stringify(out, null, 2);
  console.log(text);
  if (process.env.RESULTS) writeFileSync(process.env.RESULTS, text);
  await Promise.all(workers.map((w) => stop(w, 5_000)));
  await stop(receiver, 5_000);
  sandbox.emitter.configure(null, null);
  await api.close();
  conn.disconnect();
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    rmSync(scratch, { recursive: true, force: true });
    process.exit(process.exitCode ?? 0);
  });
