// bench/history: what the delivery history costs the path from the inbox to a finished handler run.
//
//   node --import tsx bench/history/run.ts          (from the repository root; no build needed)
//
// The webhook route and the ingest pump write no history: receipt and queued
// time are written with the fan-out by the `events` worker (a repeat answered
// 200 duplicate is counted from the receiver, batched off the request). So
// receiver throughput (bench/ingest) and the pump are untouched by design, and
// the cost is in the workers. This measures them: a fresh redis-server (AOF
// everysec), an inbox filled with N distinct ~500-byte `message.received`
// deliveries, then in this process the worker's IngestPump and the BullMQ
// workers of `switchyard work` (startWorker; one no-op handler, the
// bench/memory one) until every `events` and `handlers` job completed —
// with history off and on, alternating in ROUNDS so drifts in foreign load hit
// both. Reported per case: deliveries/s end to end, CPU µs per delivery of this
// process and of redis-server, and, with history on, Redis bytes per delivery of
// the history keys (UNLINKed and used_memory compared).
//
// Knobs: DELIVERIES=5000 ROUNDS=3 CONCURRENCY=10 RESULTS=<file.json>
import { mkdtempSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { encodeInboxItem } from '../../src/queue/inbox-item.js';
import { ingestKeys } from '../../src/queue/names.js';
import { IngestPump } from '../../src/queue/pump.js';
import { openQueues } from '../../src/queue/queues.js';
import { startWorker } from '../../src/runtime/worker.js';
import { HandlerSet, handlerSnapshot } from '../../src/handler/set.js';
import { loadHandlers } from '../../src/handler/loader.js';
import { cpuSeconds, log, machine, selfCpuSeconds, sleep, startRedis, runBench, until } from '../lib/proc.js';

const N = Number(process.env.DELIVERIES ?? 5_000);
const CONCURRENCY = process.env.CONCURRENCY ?? '10';
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PREFIX = 'switchyard';
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-history-'));

function item(i: number): string {
  const id = `evt_${randomBytes(16).toString('hex')}`;
  const at = new Date().toISOString();
  const body = JSON.stringify({ id, event: 'message.received', created_at: at, data: {
    id: 100_000 + i, conversation_id: 812, type: 'message', direction: 'inbound', sender_type: 'contact', user_id: null,
    body: 'Hi! Is my order #1043 out for delivery yet? It was supposed to arrive on Tuesday and I have not heard back.', content_type: 'text', status: null, created_at: at,
  } });
  return encodeInboxItem({ key: id, name: 'message.received', receivedAt: at, secretIndex: 0, body, headers: { 'content-type': 'application/json' } });
}

interface Row { round: number; history: boolean; perSec: number; workerCpuUs: number; redisCpuUs: number; historyBytesPerDelivery: number | null }

async function main(): Promise<void> {
  const redis = await startRedis(scratch);
  const r = new Redis(redis.url, { maxRetriesPerRequest: null });
  const rows: Row[] = [];
  const keys = ingestKeys(PREFIX);
  const noop = (await loadHandlers(join(import.meta.dirname, '../memory/handlers'))).map((l) => l.handler);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const history of round % 2 === 1 ? [false, true] : [true, false]) {
      await r.flushall();
      for (let i = 0; i < N; i += 1000) await r.rpush(keys.inbox, ...Array.from({ length: Math.min(1000, N - i) }, (_, j) => item(i + j)));
      await sleep(1000);
      const commands = new Redis(redis.url, { maxRetriesPerRequest: null });
      const blocking = new Redis(redis.url, { maxRetriesPerRequest: null });
      const queues = openQueues(commands, PREFIX);
      const config = loadConfig({ QUEUE_PREFIX: PREFIX, HISTORY: history ? 'on' : 'off', WORKER_CONCURRENCY: CONCURRENCY, LOG_LEVEL: 'warn' });
      const logger = pino({ level: 'warn' });
      const cpu0 = selfCpuSeconds();
      const rcpu0 = cpuSeconds(redis.child.pid);
      const t0 = performance.now();
      const worker = await startWorker({ config, redisUrl: redis.url, log: logger, set: new HandlerSet(handlerSnapshot(noop, undefined, {})) }, queues);
      const pump = new IngestPump({ redis: commands, blocking, events: queues.events, prefix: PREFIX, log: logger });
      pump.start();
      await until('every events and handlers job to complete', async () =>
        (await queues.events.getCompletedCount()) >= N && (await queues.handlers.normal.getCompletedCount()) >= N, 600_000, 20);
      const ms = performance.now() - t0;
      const cpu = selfCpuSeconds() - cpu0;
      const rcpu = cpuSeconds(redis.child.pid) - rcpu0;
      await pump.stop();
      await worker.close(5_000);
      await queues.close();
      commands.disconnect();
      blocking.disconnect();
      let historyBytes: number | null = null;
      if (history) {
        await sleep(1000);
        const before = Number(/used_memory:(\d+)/.exec(await r.info('memory'))?.[1]);
        const hist: string[] = [];
        let cursor = '0';
        do { const [c, ks] = await r.scan(cursor, 'MATCH', `${PREFIX}:hist:*`, 'COUNT', 1000); cursor = c; hist.push(...ks); } while (cursor !== '0');
        for (let i = 0; i < hist.length; i += 1000) await r.unlink(...hist.slice(i, i + 1000));
        await sleep(1000);
        const after = Number(/used_memory:(\d+)/.exec(await r.info('memory'))?.[1]);
        historyBytes = Math.round((before - after) / N);
      }
      const row = { round, history, perSec: Math.round(N / (ms / 1000)), workerCpuUs: Math.round((cpu * 1e6) / N), redisCpuUs: Math.round((rcpu * 1e6) / N), historyBytesPerDelivery: historyBytes };
      rows.push(row);
      log(JSON.stringify(row));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const pick = (h: boolean, f: (x: Row) => number) => median(rows.filter((x) => x.history === h).map(f));
  const summary = {
    date: new Date().toUTCString(), machine: machine(), deliveries: N, rounds: ROUNDS, rows,
    median: {
      off: { perSec: pick(false, (x) => x.perSec), workerCpuUs: pick(false, (x) => x.workerCpuUs), redisCpuUs: pick(false, (x) => x.redisCpuUs) },
      on: { perSec: pick(true, (x) => x.perSec), workerCpuUs: pick(true, (x) => x.workerCpuUs), redisCpuUs: pick(true, (x) => x.redisCpuUs) },
    },
    onOverOff: Number((pick(true, (x) => x.perSec) / pick(false, (x) => x.perSec)).toFixed(3)),
    roundRatios: Array.from({ length: ROUNDS }, (_, i) => {
      const on = rows.find((x) => x.round === i + 1 && x.history)?.perSec ?? NaN;
      const off = rows.find((x) => x.round === i + 1 && !x.history)?.perSec ?? NaN;
      return Number((on / off).toFixed(3));
    }),
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (process.env.RESULTS) writeFileSync(process.env.RESULTS, JSON.stringify(summary, null, 2));
  r.disconnect();
}

await runBench(main, [scratch]);
