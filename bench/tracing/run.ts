// bench/tracing: handler throughput with tracing off vs on (OTLP export to a
// local collector that accepts and discards), one run each, side by side.
//
//   node --import tsx bench/tracing/run.ts          (from the repository root)
//
// Each mode, on a fresh queue prefix of one fresh redis-server (AOF everysec):
//   - `switchyard serve` (receiver, no pump) takes N signed message.received
//     deliveries (the backlog); with tracing on its receipt and append spans are
//     exported too and each delivery carries its traceparent;
//   - then one `switchyard work` (pump, fan-out, handlers; HANDLERS_DIR =
//     test/support/handlers/notes: one POST /conversations/{id}/notes per event)
//     drains it against the sandbox in this process (burst high enough never to
//     pace). Measured: handler runs/s from the first completed run to the last
//     (start-up excluded), and the worker's CPU seconds per 1 000 runs.
// Tracing on = OTEL_EXPORTER_OTLP_ENDPOINT at the collector in this process,
// OTEL_EXPORTER_OTLP_PROTOCOL (PROTOCOL, default http/protobuf).
//
// Knobs: DELIVERIES=2000 CONCURRENCY=10 PROTOCOL=http/protobuf|http/json SKIP_BUILD=1 ORDER=off,on
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createSandbox } from '../../src/sandbox/index.js';
import { sign } from '../../src/events/signature.js';
import { HANDLERS_QUEUE } from '../../src/queue/names.js';
import { startOtlpCollector } from '../../test/support/otlp-collector.js';
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
  ROOT,
  start,
  startRedis,
  stop,
  stopAll,
  until,
} from '../lib/proc.js';

const N = Number(process.env.DELIVERIES ?? 2000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 10);
const PROTOCOL = process.env.PROTOCOL ?? 'http/protobuf';
const ORDER = (process.env.ORDER ?? 'off,on').split(',') as ('off' | 'on')[];
const SECRET = 'bench-tracing-secret';
const TOKEN = 'sbx_full_acme';
const BURST = 10_000; // the most WORKSPACE_API_BURST takes: 1 000 calls/s, above what one worker reaches here

const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-tracing-'));

interface Result {
  mode: string;
  runsPerSec: number;
  drainS: number;
  workerCpuPer1k: number;
  exportRequests: number;
}

async function main(): Promise<void> {
  build();
  log(machine());
  const redis = await startRedis(scratch);
  const sandbox = createSandbox({ burst: BURST });
  const sbx = await sandbox.listen(0);
  const collector = await startOtlpCollector({ discard: true });
  const conv = (
    (await (await fetch(`${sbx.baseUrl}/conversations`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as {
      data: { id: number }[];
    }
  ).data[0]?.id as number;

  const results: Result[] = [];
  for (const mode of ORDER) {
    const prefix = `benchtrace-${mode}-${randomUUID().slice(0, 6)}`;
    const tracing: Record<string, string> =
      mode === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: PROTOCOL } : {};
    const common = {
      REDIS_URL: redis.url,
      QUEUE_PREFIX: prefix,
      WEBHOOK_SECRETS: SECRET,
      LOG_LEVEL: 'warn',
      INGEST_PUMP: 'auto',
      WORKSPACE_API_URL: sbx.baseUrl,
      WORKSPACE_API_TOKEN: TOKEN,
      WORKSPACE_API_BURST: String(BURST),
      HANDLERS_DIR: join(ROOT, 'test/support/handlers/notes'),
      WORKER_CONCURRENCY: String(CONCURRENCY),
      ...tracing,
    };
    const exports0 = collector.contentTypes.length;
    const port = await freePort();
    const receiver = start('node', [BIN, 'serve'], { env: { ...common, PORT: String(port), HOST: '127.0.0.1' }, name: `serve-${mode}` });
    await until('receiver', () => httpOk(`http://127.0.0.1:${port}/healthz`), 30_000);
    const bodies = Array.from({ length: N }, () => {
      const at = new Date().toISOString();
      return JSON.stringify({
        id: `evt_${randomUUID().replace(/-/g, '')}`,
        event: 'message.received',
        created_at: at,
        data: {
          id: 1,
          conversation_id: conv,
          type: 'message',
          direction: 'inbound',
          sender_type: 'contact',
          user_id: null,
          body: 'hello',
          content_type: 'text',
          status: null,
          created_at: at,
        },
      });
    });
    await pool(bodies, 32, async (body) => {
      const r = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(SECRET, body) },
      });
      await r.arrayBuffer();
      if (r.status !== 202) throw new Error(`receiver answered ${r.status}`);
    });
    await stop(receiver);
    log(`${mode}: ${N} deliveries in the inbox`);

    const conn = new Redis(redis.url, { maxRetriesPerRequest: null });
    const handlers = new Queue(HANDLERS_QUEUE, { connection: conn, prefix });
    const done = async () => {
      const c = await handlers.getJobCounts('completed', 'failed');
      return (c['completed'] ?? 0) + (c['failed'] ?? 0);
    };
    const worker = start('node', [BIN, 'work'], { env: common, name: `work-${mode}` });
    await until('first handler run', async () => (await done()) >= 1, 60_000, 5);
    const t0 = performance.now();
    const cpu0 = cpuSeconds(worker.pid);
    const busy0 = machineBusy();
    await until('every handler run', async () => (await done()) >= N, 600_000, 20);
    const drainS = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(worker.pid) - cpu0;
    const busy = machineBusy() - busy0;
    const failed = (await handlers.getJobCounts('failed'))['failed'] ?? 0;
    await stop(worker);
    await handlers.close();
    conn.disconnect();
    const r: Result = {
      mode,
      runsPerSec: (N - 1) / drainS,
      drainS,
      workerCpuPer1k: (cpu / (N - 1)) * 1000,
      exportRequests: collector.contentTypes.length - exports0,
    };
    results.push(r);
    log(
      `${mode}: ${r.runsPerSec.toFixed(0)} runs/s, drain ${drainS.toFixed(2)} s, worker CPU ${r.workerCpuPer1k.toFixed(2)} s / 1000 runs, machine busy ${(busy / drainS).toFixed(2)} cores, ${failed} failed, ${r.exportRequests} OTLP export requests`,
    );
  }
  const off = results.find((r) => r.mode === 'off');
  const on = results.find((r) => r.mode === 'on');
  const lines = [
    `deliveries ${N}, WORKER_CONCURRENCY ${CONCURRENCY}, protocol ${PROTOCOL}, order ${ORDER.join(' → ')}`,
    '| tracing | handler runs/s | drain (s) | worker CPU s / 1000 runs | OTLP requests |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...results.map(
      (r) => `| ${r.mode} | ${r.runsPerSec.toFixed(0)} | ${r.drainS.toFixed(2)} | ${r.workerCpuPer1k.toFixed(2)} | ${r.exportRequests} |`,
    ),
  ];
  if (off && on)
    lines.push(
      `on / off throughput: ${(on.runsPerSec / off.runsPerSec).toFixed(3)} (cost ${((1 - on.runsPerSec / off.runsPerSec) * 100).toFixed(1)} %); CPU per run on / off: ${(on.workerCpuPer1k / off.workerCpuPer1k).toFixed(3)}`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
  await collector.close();
  await sbx.close();
}

main()
  .catch((err: unknown) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    rmSync(scratch, { recursive: true, force: true });
  });
