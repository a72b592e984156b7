// bench/memory: Redis memory per retained delivery and per dedupe key.
//
//   node --import tsx bench/memory/run.ts          (from the repository root)
//
// A fresh redis-server (AOF everysec), `switchyard serve` (receiver) and one
// `switchyard work` (ingest pump + workers; HANDLERS_DIR=bench/memory/handlers:
// one no-op handler on message.received, so each delivery leaves one completed
// `events` job and one completed `handlers` job, both retained 24 h). Then:
//   1. used_memory (INFO memory) once everything is idle         → M0
//   2. N distinct signed message.received deliveries over HTTP (202 each),
//      wait until N events and N handlers jobs completed, idle     → M1
//      (M1 − M0) / N = bytes per retained delivery, dedupe key included
//   3. MEMORY USAGE samples of one delivery's keys (dedupe key, events job
//      hash, handlers job hash) and of the shared sorted sets per entry
//   4. every dedupe key UNLINKed                                    → M2
//      (M1' − M2) / N = bytes per dedupe key (M1' = used_memory read again just
//      before the UNLINK); the rest of (M1 − M0) / N is the two retained jobs
//   With HISTORY on (the default), before step 4 every history key
//   (<prefix>:hist:*) is UNLINKed too → MH: (M1' − MH) / N = history bytes per
//   delivery (receipt, fan-out and the one attempt of the no-op handler).
//   used_memory here excludes client and AOF buffers (mem_clients_normal,
//   mem_aof_buffer), which follow traffic, not data; the raw figure is printed too.
//
// Knobs: DELIVERIES=5000 HISTORY=on|off SKIP_BUILD=1 RESULTS=<file.json>
import { mkdtempSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { sign } from '../../src/events/signature.js';
import { BIN, build, freePort, httpOk, log, machine, pool, sleep, start, startRedis, stop, runBench, until } from '../lib/proc.js';

const N = Number(process.env.DELIVERIES ?? 5000);
const HISTORY = process.env.HISTORY ?? 'on';
const SECRET = 'bench-memory-secret';
const PREFIX = 'switchyard';
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-memory-'));

/**
 * used_memory without the buffers that depend on traffic, not on data: client
 * query/output buffers and the AOF buffer (INFO memory mem_clients_normal,
 * mem_aof_buffer). Read after a pause so lazy frees and buffers settle.
 */
async function usedMemory(r: Redis): Promise<number> {
  await sleep(1500);
  const info = await r.info('memory');
  const f = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1] ?? 0);
  raw.push(f('used_memory'));
  return f('used_memory') - f('mem_clients_normal') - f('mem_aof_buffer');
}
const raw: number[] = [];

async function main(): Promise<void> {
  build();
  const redis = await startRedis(scratch);
  const r = new Redis(redis.url, { maxRetriesPerRequest: null });
  const port = await freePort();
  const env = {
    REDIS_URL: redis.url,
    QUEUE_PREFIX: PREFIX,
    LOG_LEVEL: 'warn',
    WEBHOOK_SECRETS: SECRET,
    HANDLERS_DIR: './bench/memory/handlers',
    HISTORY,
  };
  const receiver = start('node', [BIN, 'serve'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, name: 'serve' });
  const worker = start('node', [BIN, 'work'], { env, name: 'work' });
  try {
    await until('receiver /readyz', () => httpOk(`http://127.0.0.1:${port}/readyz`));
    await sleep(3000);
    if (worker.exitCode !== null) throw new Error('worker exited at start-up');
    const events = new Queue('events', { connection: r, prefix: PREFIX });
    const handlers = new Queue('handlers', { connection: r, prefix: PREFIX });
    const m0 = await usedMemory(r);
    const keys0 = await r.dbsize();

    const ids: string[] = [];
    const bodies = Array.from({ length: N }, (_, i) => {
      const id = `evt_${randomBytes(16).toString('hex')}`;
      ids.push(id);
      return JSON.stringify({
        id,
        event: 'message.received',
        created_at: new Date().toISOString(),
        data: {
          id: 100_000 + i,
          conversation_id: 812,
          type: 'message',
          direction: 'inbound',
          sender_type: 'contact',
          user_id: null,
          body: 'Hi! Is my order #1043 out for delivery yet? 🚚',
          content_type: 'text',
          status: null,
          created_at: new Date().toISOString(),
        },
      });
    });
    const bodyBytes = bodies.reduce((a, b) => a + Buffer.byteLength(b), 0) / N;
    const status: Record<number, number> = {};
    await pool(bodies, 16, async (body) => {
      const res = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(SECRET, body) },
      });
      await res.arrayBuffer();
      status[res.status] = (status[res.status] ?? 0) + 1;
    });
    log(`sent ${N}: ${JSON.stringify(status)}`);
    await until(
      'all jobs completed',
      async () => {
        const e = await events.getJobCountByTypes('completed');
        const h = await handlers.getJobCountByTypes('completed');
        return e >= N && h >= N;
      },
      600_000,
      500,
    );
    await sleep(2000);
    const m1 = await usedMemory(r);
    const keys1 = await r.dbsize();

    // MEMORY USAGE samples
    const sample = ids.filter((_, i) => i % Math.max(1, Math.floor(N / 200)) === 0);
    const allKeys: string[] = [];
    let cursor = '0';
    do {
      const [c, ks] = await r.scan(cursor, 'COUNT', 1000);
      cursor = c;
      allKeys.push(...ks);
    } while (cursor !== '0');
    const pattern = (k: string) => k.replace(/evt_[0-9a-f]{32}/g, '<id>').replace(/%3Aevt_[0-9a-f]{32}/g, '<id>');
    const groups = new Map<string, string[]>();
    for (const k of allKeys) groups.set(pattern(k), [...(groups.get(pattern(k)) ?? []), k]);
    const perPattern: Array<{ pattern: string; keys: number; type: string; bytesEach: number; entries?: number; bytesPerEntry?: number }> =
      [];
    for (const [p, ks] of [...groups.entries()].sort((a, b) => b[1].length - a[1].length)) {
      const picked = ks.filter((_, i) => i % Math.max(1, Math.floor(ks.length / 100)) === 0);
      let total = 0;
      for (const k of picked) total += Number(await r.memory('USAGE', k, 'SAMPLES', 0)) || 0;
      const type = await r.type(ks[0] as string);
      const row: (typeof perPattern)[number] = { pattern: p, keys: ks.length, type, bytesEach: Math.round(total / picked.length) };
      if (ks.length === 1 && (type === 'zset' || type === 'list' || type === 'hash' || type === 'set' || type === 'stream')) {
        const entries =
          type === 'zset'
            ? await r.zcard(ks[0]!)
            : type === 'list'
              ? await r.llen(ks[0]!)
              : type === 'hash'
                ? await r.hlen(ks[0]!)
                : type === 'set'
                  ? await r.scard(ks[0]!)
                  : await r.xlen(ks[0]!);
        row.entries = entries;
        if (entries) row.bytesPerEntry = Math.round(row.bytesEach / entries);
      }
      perPattern.push(row);
    }
    void sample;

    // dedupe keys away (memory read again right before: the scan above must not count)
    const m1b = await usedMemory(r);
    const historyKeys = allKeys.filter((k) => k.startsWith(`${PREFIX}:hist:`));
    for (let i = 0; i < historyKeys.length; i += 1000) await r.unlink(...historyKeys.slice(i, i + 1000));
    const mh = historyKeys.length > 0 ? await usedMemory(r) : m1b;
    const dedupeKeys = allKeys.filter((k) => k.startsWith(`${PREFIX}:dedupe:`));
    for (let i = 0; i < dedupeKeys.length; i += 1000) await r.unlink(...dedupeKeys.slice(i, i + 1000));
    const m2 = await usedMemory(r);
    await events.close();
    await handlers.close();

    const summary = {
      date: new Date().toUTCString(),
      machine: machine(),
      deliveries: N,
      answers: status,
      avgBodyBytes: Math.round(bodyBytes),
      history: HISTORY,
      usedMemory: { m0, m1, m1b, mh, m2, rawUsedMemory: raw },
      bytesPerRetainedDeliveryRaw: Math.round(((raw[1] ?? 0) - (raw[0] ?? 0)) / N),
      keys: { before: keys0, after: keys1, perDelivery: Number(((keys1 - keys0) / N).toFixed(2)) },
      bytesPerRetainedDelivery: Math.round((m1 - m0) / N),
      bytesPerDedupeKey: Math.round((mh - m2) / dedupeKeys.length),
      bytesPerDeliveryHistory: Math.round((m1b - mh) / N),
      historyKeys: historyKeys.length,
      bytesPerDeliveryJobsOnly: Math.round((m1 - m0) / N - (mh - m2) / dedupeKeys.length - (m1b - mh) / N),
      dedupeKeys: dedupeKeys.length,
      memoryUsageByKeyPattern: perPattern,
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    if (process.env.RESULTS) writeFileSync(process.env.RESULTS, JSON.stringify(summary, null, 2));
  } finally {
    r.disconnect();
    await stop(worker);
    await stop(receiver);
  }
}

await runBench(main, [scratch]);
