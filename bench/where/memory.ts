// bench/where/memory.ts: the Redis bytes a kept body (KEEP_BODIES) adds per delivery.
//
//   node --import tsx bench/where/memory.ts        (from the repository root; knobs: DELIVERIES=20000 SEED=42)
//
// A fresh redis-server. N realistic deliveries (bench/where/fill.ts: 70 % messages of 3–70 words, conversations,
// contacts, orders with 1–3 items) are written to the history by the real HistoryWriter twice, under two prefixes:
// KEEP_BODIES off, then on. used_memory (INFO memory, net of client and AOF buffers) is read when idle before and
// after each fill: (on − off) / N is what keeping bodies adds per delivery, the key, its TTL and the keyspace's
// entries included. MEMORY USAGE … SAMPLES 0 of every `hist:b:*` key and STRLEN give the per-key figures, and the
// time packBody takes per body (node:zlib deflateRaw) is the CPU it adds to the worker's fan-out.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { packBody } from '../../src/history/bodies.js';
import { log, machine, runBench, sleep, startRedis } from '../lib/proc.js';
import { fillHistory, realisticBody, seeded } from './fill.js';

const N = Number(process.env.DELIVERIES ?? 20_000);
const SEED = Number(process.env.SEED ?? 42);
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-bodies-'));

async function usedMemory(r: Redis): Promise<number> {
  await sleep(1500);
  const info = await r.info('memory');
  const f = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1] ?? 0);
  return f('used_memory') - f('mem_clients_normal') - f('mem_aof_buffer');
}

async function main(): Promise<void> {
  const redis = await startRedis(scratch);
  const r = new Redis(redis.url, { maxRetriesPerRequest: null });
  try {
    const now = Date.now();
    const span = { n: N, fromMs: now - 86_400_000, toMs: now, seed: SEED };
    const m0 = await usedMemory(r);
    await fillHistory(r, { ...span, prefix: 'off', keepBodiesMs: 0 });
    const m1 = await usedMemory(r);
    const { bodyBytes } = await fillHistory(r, { ...span, prefix: 'on', keepBodiesMs: 7 * 86_400_000 });
    const m2 = await usedMemory(r);
    const keys = await r.keys('on:hist:b:*');
    let usage = 0;
    let stored = 0;
    for (let i = 0; i < keys.length; i += 500) {
      const p = r.pipeline();
      for (const k of keys.slice(i, i + 500)) p.memory('USAGE', k, 'SAMPLES', 0).strlen(k);
      const rows = (await p.exec()) ?? [];
      for (let j = 0; j < rows.length; j += 2) {
        usage += Number(rows[j]?.[1] ?? 0);
        stored += Number(rows[j + 1]?.[1] ?? 0);
      }
    }
    // CPU of packBody per body, on the same bodies (after a warm-up).
    const rnd = seeded(SEED);
    const bodies = Array.from({ length: 5000 }, (_, i) => realisticBody(rnd, now + i).raw);
    for (const b of bodies.slice(0, 500)) packBody(b);
    const t0 = process.cpuUsage();
    for (const b of bodies) packBody(b);
    const t = process.cpuUsage(t0);
    const result = {
      date: new Date().toISOString(),
      machine: machine(),
      deliveries: N,
      keptKeys: keys.length,
      rawBodyBytesAvg: Math.round(bodyBytes / N),
      storedBytesAvg: Math.round(stored / keys.length),
      compression: Math.round((stored / bodyBytes) * 1000) / 1000,
      memoryUsageAvg: Math.round(usage / keys.length),
      historyWithoutBodiesPerDelivery: Math.round((m1 - m0) / N),
      addedPerDelivery: Math.round((m2 - m1 - (m1 - m0)) / N),
      packBodyMicros: Math.round(((t.user + t.system) / bodies.length) * 10) / 10,
    };
    log(JSON.stringify(result, null, 2));
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    r.disconnect();
  }
}

void runBench(main, [scratch]);
