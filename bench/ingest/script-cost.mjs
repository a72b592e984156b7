// Redis's own cost of the ingest script, in instructions per delivery: a count
// that other processes on a shared machine do not move (unlike CPU time).
//
//   node bench/ingest/script-cost.mjs [name=path/to/ingestBatch-n.lua ...]
//
// For each script (default: this tree's src/queue/lua/ingestBatch-n.lua), a
// fresh redis-server (AOF everysec as in bench/ingest, `hz 1` so its timer
// work does not depend on how slowly it runs) under valgrind's callgrind;
// 200 batches of 16 deliveries (~700-byte payloads) warm it up, then the
// counters are zeroed, ROUNDS x 400 batches run, and the total instruction
// count (Ir) is divided by the deliveries. Needs valgrind (Debian: `apt-get
// install valgrind`). Scripts of the layout before the pending fan-out mark
// (KEYS[1] inbox, then the dedupe keys; ARGV ttl, then payload and receivedAt)
// are recognised and called that way, so an old revision can be compared:
//   git show <rev>:src/queue/lua/ingestBatch-n.lua > /tmp/old.lua
//   node bench/ingest/script-cost.mjs old=/tmp/old.lua new=src/queue/lua/ingestBatch-n.lua
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

const BATCHES = Number(process.env.BATCHES ?? 400);
const BATCH = 16;
const PREFIX = 'bench:ingest:dedupe:';
const BODY = 'x'.repeat(Number(process.env.BODY ?? 700));
const DEFAULT = join(import.meta.dirname, '../../src/queue/lua/ingestBatch-n.lua');

async function cost(name, file) {
  const lua = readFileSync(file, 'utf8');
  const marks = lua.includes('KEYS[i + 2]'); // the layout with the pending fan-out set as KEYS[2]
  const dir = mkdtempSync(join(tmpdir(), 'script-cost-'));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--hz', '1'];
  const child = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${dir}/cg.out`, 'redis-server', ...args], { stdio: 'ignore' });
  const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: null, retryStrategy: () => 200 });
  redis.on('error', () => undefined);
  try {
    const sha = await redis.script('LOAD', lua);
    let seq = 0;
    const batch = () => {
      const keys = marks ? ['bench:ingest:inbox', 'bench:ingest:pending'] : ['bench:ingest:inbox'];
      const argv = marks ? [86_400_000, PREFIX.length] : [86_400_000];
      for (let i = 0; i < BATCH; i++) {
        keys.push(`${PREFIX}evt_${name}_${(seq++).toString(36).padStart(8, '0')}`);
        const at = new Date().toISOString();
        argv.push(BODY, at, ...(marks ? [Date.parse(at)] : []));
      }
      return redis.evalsha(sha, keys.length, ...keys, ...argv);
    };
    for (let b = 0; b < 200; b++) await batch();
    execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
    for (let b = 0; b < BATCHES; b++) await batch();
    execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
    // The dump after zeroing is the file with a part suffix; its `totals:` line is the count.
    const dumps = readdirSync(dir).filter((f) => /^cg\.out\.\d+$/.test(f));
    const totals = dumps.map((f) => Number(/\ntotals:\s+(\d+)/.exec(readFileSync(join(dir, f), 'utf8'))?.[1] ?? NaN));
    return Math.max(...totals) / (BATCHES * BATCH);
  } finally {
    redis.disconnect();
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

const cases = process.argv.slice(2).map((a) => a.split('=', 2));
const rounds = Number(process.env.ROUNDS ?? 1);
const results = new Map();
for (let r = 0; r < rounds; r++) {
  for (const [name, file] of cases.length > 0 ? cases : [['this tree', DEFAULT]]) {
    const ir = await cost(name, file);
    results.set(name, [...(results.get(name) ?? []), ir]);
    process.stdout.write(`${name}: ${Math.round(ir)} instructions per delivery\n`);
  }
}
if (rounds > 1) {
  for (const [name, xs] of results) process.stdout.write(`${name}: ${xs.map((x) => Math.round(x)).join(', ')}\n`);
}
