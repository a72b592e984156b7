/**
 * Fault-suite rig: a sandbox in this process, receivers and workers as real
 * CLI processes (the built `switchyard`), Redis either the shared test server
 * or a killable one of the scenario's own. Every scenario reconciles
 *   sent       distinct deliveries the test sent (or the sandbox emitted)
 *   acked      distinct deliveries answered 2xx (202 accepted/spooled, 200 duplicate)
 *   processed  `handlers` jobs completed (job id from the delivery key)
 *   written    non-replayed 201s of POST /conversations/{id}/notes in the sandbox request log
 * and fails on any loss (acked but not written once) or repeat (written twice).
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { jobIdFor } from '../../../src/events/envelope.js';
import { EVENTS_QUEUE, HANDLER_QUEUES } from '../../../src/queue/names.js';
import { freePort, type ManagedRedis } from '../../../src/redis/managed.js';
import { createSandbox, type RunningSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import type { LoggedRequest } from '../../../src/sandbox/request-log.js';
import { sign } from '../../../src/events/signature.js';
import { runCli, type CliProcess } from '../cli.js';
import { T } from '../sandbox.js';
import { TEST_SECRET } from '../service.js';

export const TEST_HANDLERS = fileURLToPath(new URL('../handlers/notes', import.meta.url));
export const HANDLER_ID = 'note-on-message';
const FULL_TOKEN = T.full;
const BURST = 10_000;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Keeps every notes write of the sandbox request log. The log holds the last
 * 5 000 calls, so it is harvested often; a gap in its sequence numbers
 * (entries dropped before they were read) fails the scenario instead of
 * silently under-counting.
 */
export class WriteCollector {
  private readonly seen = new Map<number, LoggedRequest>();
  private lastSeq = 0;
  private timer: NodeJS.Timeout | undefined;
  overflowed = false;

  constructor(private readonly sandbox: Sandbox) {}

  harvest(): void {
    const all = this.sandbox.state.log.list();
    if (all.length > 0 && (all[0] as LoggedRequest).seq > this.lastSeq + 1) this.overflowed = true;
    for (const e of all) {
      if (e.seq <= this.lastSeq) continue;
      if (e.method === 'POST' && /^\/conversations\/[^/]+\/notes$/.test(e.path)) this.seen.set(e.seq, e);
    }
    if (all.length > 0) this.lastSeq = Math.max(this.lastSeq, (all[all.length - 1] as LoggedRequest).seq);
  }

  start(everyMs = 100): void {
    this.timer = setInterval(() => this.harvest(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.harvest();
  }

  /** Forgets what was collected so far (a new scenario on the same sandbox). */
  reset(): void {
    this.harvest();
    this.seen.clear();
  }

  entries(): LoggedRequest[] {
    return [...this.seen.values()];
  }

  /** Fresh (non-replayed) 201 writes per delivery id (`seen <id>` is the note body). */
  writesById(): Map<string, number> {
    const m = new Map<string, number>();
    for (const e of this.seen.values()) {
      if (e.status !== 201 || e.replay) continue;
      const body = (e.body as { body?: string } | null)?.body ?? '';
      const id = body.startsWith('seen ') ? body.slice(5) : body;
      m.set(id, (m.get(id) ?? 0) + 1);
    }
    return m;
  }

  statuses(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const e of this.seen.values()) {
      const k = `${e.status}${e.replay ? 'r' : ''}`;
      out[k] = (out[k] ?? 0) + 1;
    }
    return out;
  }
}

export interface Reconciliation {
  scenario: string;
  sent: number;
  acked: number;
  processed: number;
  written: number;
  lost: number;
  repeated: number;
  /** Writes for ids never sent (should be 0). */
  unexpected: number;
  failedJobs: number;
  ms: number;
  lostIds: string[];
  repeatedIds: string[];
}

export function formatReconciliation(r: Reconciliation): string {
  return `[faults] ${r.scenario}: sent=${r.sent} acked=${r.acked} processed=${r.processed} written=${r.written} lost=${r.lost} repeated=${r.repeated} unexpected=${r.unexpected} failedJobs=${r.failedJobs} (${(r.ms / 1000).toFixed(1)} s)`;
}

export interface Rig {
  sandbox: Sandbox;
  api: RunningSandbox;
  conv: number;
  prefix: string;
  redisUrl: string;
  collector: WriteCollector;
  startReceiver(env?: Record<string, string>, port?: number): Promise<{ proc: CliProcess; url: string; port: number }>;
  startWorker(env?: Record<string, string>): CliProcess;
  /** `switchyard start`: receiver and worker in one process (resolves once both are up). */
  startService(env?: Record<string, string>, port?: number): Promise<{ proc: CliProcess; url: string; port: number }>;
  /** Completed `handlers` job ids (needs Redis up). */
  completed(): Promise<Set<string>>;
  failedJobs(): Promise<number>;
  /** When a worker last took each delivery's `handlers` job (BullMQ's `processedOn`, set at every pick-up); missing: never taken. */
  lastTaken(ids: Iterable<string>): Promise<Map<string, number>>;
  /** Waits until every acked id is processed and written (or the time runs out), lets repeats surface, then reconciles. */
  reconcile(
    scenario: string,
    sent: Iterable<string>,
    acked: Iterable<string>,
    opts?: { timeoutMs?: number; settleMs?: number; startedAt?: number },
  ): Promise<Reconciliation>;
  close(): Promise<void>;
}

export async function createRig(opts: {
  prefix: string;
  redisUrl: string;
  emitterRetry?: { baseMs: number; maxMs: number; maxAttempts: number; timeoutMs: number };
}): Promise<Rig> {
  const sandbox = createSandbox({ burst: BURST, retry: opts.emitterRetry ?? { baseMs: 50, maxMs: 500 } });
  const api = await sandbox.listen(0);
  const convs = await fetch(`${api.baseUrl}/conversations`, { headers: { authorization: 'Bearer sbx_read_acme' } });
  const conv = ((await convs.json()) as { data: { id: number }[] }).data[0]?.id as number;
  const collector = new WriteCollector(sandbox);
  collector.start();
  const procs: CliProcess[] = [];
  const common = () => ({ REDIS_URL: opts.redisUrl, QUEUE_PREFIX: opts.prefix, LOG_LEVEL: 'warn' });
  const jobKey = (id: string) => jobIdFor(id, HANDLER_ID);

  const rig: Rig = {
    sandbox,
    api,
    conv,
    prefix: opts.prefix,
    redisUrl: opts.redisUrl,
    collector,
    startReceiver: async (env = {}, port?: number) => {
      const p = port ?? (await freePort());
      const proc = runCli(['serve'], {
        ...common(),
        WEBHOOK_SECRETS: TEST_SECRET,
        PORT: String(p),
        HOST: '127.0.0.1',
        SHUTDOWN_TIMEOUT: '3s',
        ...env,
        LOG_LEVEL: 'info',
      });
      procs.push(proc);
      await proc.waitFor(/receiver listening/, 20_000);
      return { proc, url: `http://127.0.0.1:${p}/webhooks`, port: p };
    },
    startWorker: (env = {}) => {
      const proc = runCli(['work'], {
        ...common(),
        HANDLERS_DIR: TEST_HANDLERS,
        WORKSPACE_API_URL: api.baseUrl,
        WORKSPACE_API_TOKEN: FULL_TOKEN,
        WORKSPACE_API_BURST: String(BURST),
        WORKER_CONCURRENCY: '16',
        SHUTDOWN_TIMEOUT: '3s',
        ...env,
        LOG_LEVEL: 'info',
      });
      procs.push(proc);
      return proc;
    },
    startService: async (env = {}, port?: number) => {
      const p = port ?? (await freePort());
      const proc = runCli(['start'], {
        ...common(),
        WEBHOOK_SECRETS: TEST_SECRET,
        PORT: String(p),
        HOST: '127.0.0.1',
        HANDLERS_DIR: TEST_HANDLERS,
        WORKSPACE_API_URL: api.baseUrl,
        WORKSPACE_API_TOKEN: FULL_TOKEN,
        WORKSPACE_API_BURST: String(BURST),
        WORKER_CONCURRENCY: '16',
        SHUTDOWN_TIMEOUT: '3s',
        ...env,
        LOG_LEVEL: 'info',
      });
      procs.push(proc);
      await Promise.all([proc.waitFor(/receiver listening/, 20_000), proc.waitFor(/worker started/, 20_000)]);
      return { proc, url: `http://127.0.0.1:${p}/webhooks`, port: p };
    },
    completed: async () => {
      const r = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1 });
      try {
        return new Set((await Promise.all(HANDLER_QUEUES.map((q) => r.zrange(`${opts.prefix}:${q}:completed`, '0', '-1')))).flat());
      } finally {
        r.disconnect();
      }
    },
    failedJobs: async () => {
      const r = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1 });
      try {
        let n = await r.zcard(`${opts.prefix}:${EVENTS_QUEUE}:failed`);
        for (const q of HANDLER_QUEUES) n += await r.zcard(`${opts.prefix}:${q}:failed`);
        return n;
      } finally {
        r.disconnect();
      }
    },
    lastTaken: async (ids) => {
      const r = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1 });
      try {
        const taken = new Map<string, number>();
        for (const id of ids) {
          for (const q of HANDLER_QUEUES) {
            const at = await r.hget(`${opts.prefix}:${q}:${jobKey(id)}`, 'processedOn');
            if (at !== null) taken.set(id, Number(at));
          }
        }
        return taken;
      } finally {
        r.disconnect();
      }
    },
    reconcile: async (scenario, sentIt, ackedIt, ro = {}) => {
      const sent = new Set(sentIt);
      const acked = new Set(ackedIt);
      const timeoutMs = ro.timeoutMs ?? 90_000;
      const end = Date.now() + timeoutMs;
      for (;;) {
        collector.harvest();
        const written = collector.writesById();
        const done = await rig.completed().catch(() => new Set<string>());
        if ([...acked].every((id) => (written.get(id) ?? 0) >= 1 && done.has(jobKey(id)))) break;
        if (Date.now() > end) break;
        await sleep(250);
      }
      // Late repeats (a stalled job run again, a re-added batch) show up here.
      await sleep(ro.settleMs ?? 1_500);
      collector.harvest();
      const written = collector.writesById();
      const done = await rig.completed();
      const lostIds = [...acked].filter((id) => (written.get(id) ?? 0) === 0 || !done.has(jobKey(id)));
      const repeatedIds = [...written].filter(([, n]) => n > 1).map(([id]) => id);
      const r: Reconciliation = {
        scenario,
        sent: sent.size,
        acked: acked.size,
        processed: [...sent].filter((id) => done.has(jobKey(id))).length,
        written: [...sent].filter((id) => (written.get(id) ?? 0) >= 1).length,
        lost: lostIds.length,
        repeated: repeatedIds.length,
        unexpected: [...written.keys()].filter((id) => !sent.has(id)).length,
        failedJobs: await rig.failedJobs(),
        ms: Date.now() - (ro.startedAt ?? Date.now()),
        lostIds: lostIds.slice(0, 10),
        repeatedIds: repeatedIds.slice(0, 10),
      };
      console.log(
        formatReconciliation(r) +
          ` notes-log=${JSON.stringify(collector.statuses())}${collector.overflowed ? ' REQUEST-LOG-OVERFLOWED' : ''}`,
      );
      if (collector.overflowed)
        throw new Error('the sandbox request log dropped entries before they were harvested: counts are not trustworthy');
      return r;
    },
    close: async () => {
      collector.stop();
      await Promise.allSettled(procs.map((p) => p.stop('SIGKILL', 5_000)));
      sandbox.emitter.configure(null, null);
      await api.close();
    },
  };
  return rig;
}

/** One delivery as a sender sees it. */
export interface Send {
  id: string;
  body: string;
  to: number;
}

export interface SendResult {
  acked: Set<string>;
  statuses: Record<string, number>;
  /** Attempts that were retried (503 or a network error). */
  retries: number;
  /** Deliveries that never got a 2xx before the deadline. */
  gaveUp: string[];
}

/**
 * Sends every delivery with `concurrency` parallel senders, each retrying
 * on 503 and network errors (as the workspace does) until a 2xx or the deadline.
 * `urls()` is read per attempt so receivers may be replaced.
 */
export async function sendAll(
  sends: Send[],
  urls: () => string[],
  opts: { concurrency?: number; deadlineMs?: number; retryMs?: number; onProgress?: (done: number) => void } = {},
): Promise<SendResult> {
  const acked = new Set<string>();
  const statuses: Record<string, number> = {};
  const gaveUp: string[] = [];
  let retries = 0;
  let next = 0;
  let done = 0;
  const deadline = Date.now() + (opts.deadlineMs ?? 120_000);
  const worker = async () => {
    while (next < sends.length) {
      const s = sends[next++] as Send;
      const signature = sign(TEST_SECRET, s.body);
      for (;;) {
        let status: number | string;
        try {
          const url = urls()[s.to] as string;
          const r = await fetch(url, {
            method: 'POST',
            body: s.body,
            headers: { 'content-type': 'application/json', 'x-service-signature': signature },
            signal: AbortSignal.timeout(5_000),
          });
          await r.arrayBuffer();
          status = r.status;
        } catch (err) {
          status = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
        }
        statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
        if (status === 200 || status === 202) {
          acked.add(s.id);
          break;
        }
        if (typeof status === 'number' && status !== 503) throw new Error(`unexpected answer ${status} for ${s.id}`);
        if (Date.now() > deadline) {
          gaveUp.push(s.id);
          break;
        }
        retries++;
        await sleep(opts.retryMs ?? 100);
      }
      opts.onProgress?.(++done);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 16 }, worker));
  return { acked, statuses, retries, gaveUp };
}

/** PID of a redis-server (INFO server), so it can be SIGKILLed: a crash, not a shutdown. */
export async function redisPid(server: ManagedRedis): Promise<number> {
  const r = new Redis(server.url, { maxRetriesPerRequest: 1 });
  const info = await r.info('server').finally(() => r.disconnect());
  const m = info.match(/process_id:(\d+)/);
  if (!m) throw new Error(`no process_id in INFO: ${info}`);
  return Number(m[1]);
}

/** SIGKILLs the redis-server and waits until the port refuses connections. */
export async function killRedis(server: ManagedRedis): Promise<void> {
  const pid = await redisPid(server);
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
  throw new Error(`redis-server ${pid} did not die`);
}

/** Fisher–Yates with a seeded generator, so a failing order can be reproduced from the printed seed. */
export function shuffle<T>(items: T[], seed: number): T[] {
  let s = seed >>> 0 || 1;
  const rand = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}
