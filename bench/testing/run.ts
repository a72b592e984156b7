// bench/testing: a recipe test through switchyard/testing's testHandler, warm,
// against the same API calls made directly on the sandbox, in one process.
//
//   node --import tsx bench/testing/run.ts          (from the repository root; no build, no Redis, no port)
//
// Each iteration is what one recipe test does (lead-won on its fixture):
//   testHandler   — `testHandler(leadWon, 'lead.won')`: a fresh seeded in-process sandbox, the fixture read
//                   and validated, settings parsed, the worker's runner and context, two writes, logs to memory;
//                   the outcome and both calls are checked;
//   testHandler, shared sandbox — the same with `{ sandbox }` (one sandbox for all runs: no seed per run;
//                   the writes are replays of the first run's keys; created with a burst high enough for the
//                   sandbox's rate limit never to answer 429);
//   baseline      — the same two writes (`contacts.setLifecycle(36, 'Customer')`, `contacts.labels.add(36,
//                   ['customer'])`) on a fresh sandbox through an in-process client, nothing else;
//   createSandbox — a fresh seeded sandbox alone (part of both the first and the baseline).
// Cases alternate in rounds so drifting machine load hits each alike. WARMUP iterations first, then RUNS
// timed iterations per case; median and p95 in ms, and each case's median ÷ the baseline's median.
//
// Knobs: RUNS=300 WARMUP=50 RESULTS=<file.json>
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import leadWon from '../../handlers/lead-won.js';
import { createSandbox, sandboxClient, testHandler } from '../../src/testing/index.js';

const RUNS = Number(process.env['RUNS'] ?? 300);
const WARMUP = Number(process.env['WARMUP'] ?? 50);
// The sandbox's own rate limit (30 calls per 10 s, the smallest plan) would make the shared case wait for its window.
const shared = createSandbox({ burst: 1_000_000 });

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`bench/testing: ${what}`);
}

const cases: Record<string, () => Promise<void>> = {
  'testHandler (fresh sandbox per call)': async () => {
    const run = await testHandler(leadWon, 'lead.won');
    check(
      run.outcome === 'completed' && run.calls.length === 2 && run.calls.every((c) => c.status === 200),
      `unexpected run ${run.outcome} ${run.reason ?? ''}`,
    );
  },
  'testHandler (shared sandbox)': async () => {
    const run = await testHandler(leadWon, 'lead.won', { sandbox: shared });
    check(
      run.outcome === 'completed' && run.calls.length === 2 && run.calls.every((c) => c.status === 200),
      `unexpected run ${run.outcome} ${run.reason ?? ''}`,
    );
  },
  'baseline: the same 2 calls on a fresh sandbox': async () => {
    const api = sandboxClient(createSandbox());
    await api.contacts.setLifecycle(36, 'Customer');
    const labels = await api.contacts.labels.add(36, ['customer']);
    check(
      labels.some((l) => l.name === 'customer'),
      'label not added',
    );
  },
  'createSandbox alone': async () => {
    check(createSandbox().tokens.length > 0, 'no tokens');
  },
};

const times = new Map<string, number[]>(Object.keys(cases).map((k) => [k, []]));
for (let i = 0; i < WARMUP; i++) for (const fn of Object.values(cases)) await fn();
for (let i = 0; i < RUNS; i++) {
  for (const [name, fn] of Object.entries(cases)) {
    const t = performance.now();
    await fn();
    times.get(name)?.push(performance.now() - t);
  }
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};
const baseline = pct(times.get('baseline: the same 2 calls on a fresh sandbox') ?? [], 50);
const rows = [...times].map(([name, xs]) => ({
  name,
  median: pct(xs, 50),
  p95: pct(xs, 95),
  max: Math.max(...xs),
  ratio: pct(xs, 50) / baseline,
}));
console.log(
  `node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${RUNS} runs per case after ${WARMUP} warm-up, ${new Date().toISOString()}`,
);
console.log('| case | median ms | p95 ms | max ms | median vs baseline |\n|---|---:|---:|---:|---:|');
for (const r of rows)
  console.log(`| ${r.name} | ${r.median.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.max.toFixed(1)} | ${r.ratio.toFixed(2)}× |`);
const target = rows[0];
console.log(
  `target: a recipe test through testHandler (in-process sandbox) ≤ 200 ms warm → median ${target?.median.toFixed(2)} ms, p95 ${target?.p95.toFixed(2)} ms: ${(target?.p95 ?? Infinity) <= 200 ? 'met' : 'MISSED'}`,
);
if (process.env['RESULTS']) writeFileSync(process.env['RESULTS'], JSON.stringify({ runs: RUNS, warmup: WARMUP, rows }, null, 2));
