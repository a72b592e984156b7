// bench/replay: `switchyard replay` over HTTP and with --direct, against
// autocannon driving the same receiver with the same signed bodies, in one run.
//
//   node --import tsx bench/replay/run.ts          (from the repository root)
//
// - FIXTURES (10 000) distinct `switchyard.delivery/1` files (the shipped
//   message.received fixture with a fresh `evt_<32 hex>` id each, ~470-byte
//   body) are written to a temporary directory;
// - a redis-server (AOF everysec) and one `switchyard serve` (INGEST_PUMP=auto:
//   no pump in the receiver, no workers: this measures getting deliveries in)
//   are started;
// - for each of ROUNDS rounds, in turn, with Redis emptied (FLUSHALL) before
//   each case so every delivery is new (202):
//     autocannon  — bench/replay/cannon.mjs, `connections` = CONCURRENCY,
//                   each request a pre-signed body of the same 10 000;
//     replay http — `switchyard replay <dir> --to … --secret … --concurrency C --json`;
//     replay direct — `REDIS_URL=… switchyard replay <dir> --direct --concurrency C --json`.
//   deliveries/s = 2xx (or accepted) / time; for replay both its own measured
//   time (summary `ms`, after reading the files) and the process wall time
//   (node start-up and reading 10 000 files included).
// - after each case the inbox length is checked against the 202 count.
//
//   A/B (AB=0 skips it): bench/replay/ab-transport.ts runs the replay's own
//   readInputs → httpTarget → runReplay with the global fetch and with a
//   node:http keep-alive transport, to show where the replay's time goes.
//
// Knobs: FIXTURES=10000 CONCURRENCY=8,50 ROUNDS=2 AB=1 SKIP_BUILD=1 RESULTS=<file.json>
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { sign } from '../../src/events/signature.js';
import { BIN, ROOT, build, cpuSeconds, freePort, httpOk, log, machine, start, startRedis, stop, runBench, until } from '../lib/proc.js';

const N = Number(process.env.FIXTURES ?? 10_000);
const CONCURRENCY = (process.env.CONCURRENCY ?? '8,50').split(',').map(Number);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const SECRET = 'bench-replay-secret';
const PREFIX = 'benchreplay';
const HEADER = 'X-Service-Signature';
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-replay-'));

interface CaseResult {
  name: string;
  concurrency: number;
  round: number;
  ok: number;
  other: Record<string, number>;
  rate: number;
  wallRate?: number;
  ms: number;
  wallMs?: number;
  inbox: number;
  cpuUsPerDelivery: { client: number; receiver: number; redis: number };
}

// The closing JSON line of each client: cannon.mjs (autocannon) and `switchyard replay --json` (and ab-transport.ts).
const CannonOut = z.object({
  statusCodeStats: z.record(z.string(), z.object({ count: z.number() })),
  errors: z.number().optional(),
  ms: z.number(),
});
const ReplayOut = z.object({ accepted: z.number(), duplicate: z.number(), rejected: z.number(), failed: z.number(), ms: z.number() });

function runJson<S extends z.ZodType>(
  schema: S,
  cmd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ out: z.output<S>; wallMs: number; cpuSec: number }> {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let cpuSec = NaN;
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    // CPU of the child: sampled from /proc just before it exits is not possible; use getrusage-like /proc on a poll.
    const poll = setInterval(() => {
      const c = cpuSeconds(child.pid);
      if (Number.isFinite(c)) cpuSec = c;
    }, 20);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      const wallMs = performance.now() - t0;
      try {
        const line = out.trim().split('\n').pop() ?? '';
        res({ out: schema.parse(JSON.parse(line)), wallMs, cpuSec });
      } catch {
        rej(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-2000)} ${out.slice(-500)}`));
      }
    });
  });
}

async function main(): Promise<void> {
  build();
  // ---- fixtures ----
  const tpl = JSON.parse(readFileSync(join(ROOT, 'fixtures/message.received.json'), 'utf8')) as { body: string; [k: string]: unknown };
  const dir = join(scratch, 'fixtures');
  mkdirSync(dir);
  const signedLines: string[] = [];
  for (let i = 0; i < N; i++) {
    const id = `evt_${randomBytes(16).toString('hex')}`;
    const body = tpl.body.replace(/"id":"evt_[^"]+"/, `"id":"${id}"`).replace('"id":90211', `"id":${100_000 + i}`);
    writeFileSync(join(dir, `${String(i).padStart(6, '0')}.json`), JSON.stringify({ ...tpl, description: `bench ${i}`, body }, null, 2));
    signedLines.push(JSON.stringify({ body, sig: sign(SECRET, body) }));
  }
  const signedFile = join(scratch, 'signed.ndjson');
  writeFileSync(signedFile, signedLines.join('\n'));
  log(`${N} fixtures in ${dir}`);

  const redis = await startRedis(scratch);
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/webhooks`;
  const receiver = start('node', [BIN, 'serve'], {
    env: { WEBHOOK_SECRETS: SECRET, PORT: String(port), HOST: '127.0.0.1', REDIS_URL: redis.url, QUEUE_PREFIX: PREFIX, LOG_LEVEL: 'warn' },
    name: 'serve',
  });
  const results: CaseResult[] = [];
  try {
    await until('receiver /readyz', () => httpOk(`http://127.0.0.1:${port}/readyz`));
    const cases: Array<{
      name: string;
      run: (c: number) => Promise<{ ok: number; other: Record<string, number>; ms: number; wallMs?: number; clientCpu: number }>;
    }> = [
      {
        name: 'autocannon',
        run: async (c) => {
          const { out, cpuSec } = await runJson(
            CannonOut,
            'node',
            [join(ROOT, 'bench/replay/cannon.mjs'), JSON.stringify({ url, file: signedFile, header: HEADER, connections: c })],
            {},
          );
          const other = Object.fromEntries(
            Object.entries(out.statusCodeStats)
              .filter(([s]) => s !== '202')
              .map(([s, v]) => [s, v.count]),
          );
          if (out.errors) other.errors = out.errors;
          return { ok: out.statusCodeStats['202']?.count ?? 0, other, ms: out.ms, clientCpu: cpuSec };
        },
      },
      {
        name: 'replay http',
        run: async (c) => {
          const { out, wallMs, cpuSec } = await runJson(
            ReplayOut,
            'node',
            [BIN, 'replay', dir, '--to', url, '--secret', SECRET, '--concurrency', String(c), '--json'],
            { LOG_LEVEL: 'warn' },
          );
          return {
            ok: out.accepted,
            other: { duplicate: out.duplicate, rejected: out.rejected, failed: out.failed },
            ms: out.ms,
            wallMs,
            clientCpu: cpuSec,
          };
        },
      },
      ...(process.env.AB === '0'
        ? []
        : (['fetch', 'http'] as const).map((transport) => ({
            name: `A/B: replay http, ${transport === 'fetch' ? 'global fetch' : 'node:http keep-alive'} (in-process harness)`,
            run: async (c: number) => {
              const { out, wallMs, cpuSec } = await runJson(
                ReplayOut,
                'node',
                [
                  '--import',
                  'tsx',
                  join(ROOT, 'bench/replay/ab-transport.ts'),
                  JSON.stringify({ dir, url, secret: SECRET, concurrency: c, transport }),
                ],
                { LOG_LEVEL: 'warn' },
              );
              return {
                ok: out.accepted,
                other: { duplicate: out.duplicate, rejected: out.rejected, failed: out.failed },
                ms: out.ms,
                wallMs,
                clientCpu: cpuSec,
              };
            },
          }))),
      {
        name: 'replay --direct',
        run: async (c) => {
          const { out, wallMs, cpuSec } = await runJson(
            ReplayOut,
            'node',
            [BIN, 'replay', dir, '--direct', '--concurrency', String(c), '--json'],
            { REDIS_URL: redis.url, QUEUE_PREFIX: PREFIX, LOG_LEVEL: 'warn' },
          );
          return {
            ok: out.accepted,
            other: { duplicate: out.duplicate, rejected: out.rejected, failed: out.failed },
            ms: out.ms,
            wallMs,
            clientCpu: cpuSec,
          };
        },
      },
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const c of CONCURRENCY) {
        for (const k of cases) {
          await client.flushall();
          const r0 = cpuSeconds(receiver.pid);
          const d0 = cpuSeconds(redis.child.pid);
          log(`round ${round}: ${k.name}, concurrency ${c}`);
          const r = await k.run(c);
          const inbox = await client.llen(`${PREFIX}:ingest:inbox`);
          const per = (s: number) => Math.round((s * 1e6) / Math.max(1, r.ok));
          results.push({
            name: k.name,
            concurrency: c,
            round,
            ok: r.ok,
            other: r.other,
            ms: Math.round(r.ms),
            rate: Math.round((r.ok / r.ms) * 1000),
            ...(r.wallMs ? { wallMs: Math.round(r.wallMs), wallRate: Math.round((r.ok / r.wallMs) * 1000) } : {}),
            inbox,
            cpuUsPerDelivery: {
              client: per(r.clientCpu),
              receiver: k.name === 'replay --direct' ? 0 : per(cpuSeconds(receiver.pid) - r0),
              redis: per(cpuSeconds(redis.child.pid) - d0),
            },
          });
          log(JSON.stringify(results.at(-1)));
        }
      }
    }
  } finally {
    client.disconnect();
    await stop(receiver);
    await stop(redis.child);
  }

  // ---- report ----
  const lines = [
    '| case | conc. | round | accepted | other | deliveries/s (own timing) | deliveries/s (process wall) | vs autocannon | inbox = accepted | CPU µs/delivery client · receiver · redis |',
    '|---|---:|---:|---:|---|---:|---:|---:|---|---|',
  ];
  for (const r of results) {
    const ac = results.find((x) => x.name === 'autocannon' && x.concurrency === r.concurrency && x.round === r.round)!;
    const other =
      Object.entries(r.other)
        .filter(([, v]) => v)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || '–';
    lines.push(
      `| ${r.name} | ${r.concurrency} | ${r.round} | ${r.ok} | ${other} | ${r.rate} | ${r.wallRate ?? '–'} | ${(r.rate / ac.rate).toFixed(2)}× | ${r.inbox === r.ok ? '✔' : `✘ ${r.inbox}`} | ${r.cpuUsPerDelivery.client} · ${r.cpuUsPerDelivery.receiver} · ${r.cpuUsPerDelivery.redis} |`,
    );
  }
  process.stdout.write(`\n${lines.join('\n')}\n\n- machine: ${machine()}\n- date: ${new Date().toUTCString()}; ${N} fixtures\n`);
  if (process.env.RESULTS) writeFileSync(process.env.RESULTS, JSON.stringify(results, null, 2));
  if (results.some((r) => r.ok !== N || r.inbox !== r.ok)) process.exitCode = 1;
}

await runBench(main, [scratch]);
