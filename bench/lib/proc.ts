// Shared helpers of the bench scripts: child processes that are always stopped,
// free loopback ports, a fresh redis-server, CPU accounting from /proc.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = resolve(process.env.SWITCHYARD_BIN ?? join(ROOT, 'bin/switchyard.js'));

const children = new Set<ChildProcess>();

export function log(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

export interface StartOptions {
  env?: Record<string, string>;
  name?: string;
  /** Forward stderr lines (default true). */
  stderr?: boolean;
  /** Keep stdout (default: drained and discarded). */
  keepStdout?: boolean;
  /** Working directory (default the repository root). */
  cwd?: string;
}

export function start(cmd: string, args: string[], opts: StartOptions = {}): ChildProcess {
  const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const name = opts.name ?? cmd;
  if (opts.stderr !== false) child.stderr?.on('data', (d: Buffer) => process.stderr.write(`[${name}] ${d.toString()}`));
  else child.stderr?.resume();
  if (!opts.keepStdout) child.stdout?.resume();
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export function stop(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(t);
      res();
    });
    child.kill('SIGTERM');
  });
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => stop(c, 5_000)));
}

/**
 * Runs a bench's `main`: a failure is logged with its stack and sets exit code 1; then, failed or not, every
 * child is stopped, `cleanup` runs and the `dirs` (scratch folders) are removed.
 */
export async function runBench(main: () => Promise<void>, dirs: readonly string[], cleanup?: () => void): Promise<void> {
  try {
    await main();
  } catch (err) {
    log(`failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exitCode = 1;
  } finally {
    await stopAll();
    cleanup?.();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    log(`${sig}: stopping children`);
    void stopAll().finally(() => process.exit(130));
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 15_000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface RunningRedis {
  port: number;
  url: string;
  child: ChildProcess;
  dir: string;
}

/** A fresh redis-server on a free loopback port (AOF everysec, noeviction, no RDB). */
export async function startRedis(scratch: string, extra: string[] = []): Promise<RunningRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(scratch, 'redis-'));
  const child = start(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
      ...extra,
    ],
    { name: 'redis' },
  );
  await until('redis-server', async () => {
    const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined);
    try {
      await r.connect();
      return (await r.ping()) === 'PONG';
    } finally {
      r.disconnect();
    }
  });
  return { port, url: `redis://127.0.0.1:${port}`, child, dir };
}

export async function httpOk(url: string): Promise<boolean> {
  const r = await fetch(url);
  await r.arrayBuffer();
  return r.status === 200;
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds (user + system) a process has used so far; Linux /proc only, NaN elsewhere. */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/** CPU seconds of this process (all threads). */
export function selfCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Busy CPU seconds of the whole machine (all cores) from /proc/stat. */
export function machineBusy(): number {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = (f[3] ?? 0) + (f[4] ?? 0);
    return (f.slice(0, 8).reduce((a, b) => a + b, 0) - idle) / CLK_TCK;
  } catch {
    return NaN;
  }
}

export function machine(): string {
  const redisVersion = spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout.trim();
  const nproc = spawnSync('nproc', { encoding: 'utf8' }).stdout.trim();
  return `nproc ${nproc}, ${cpus()[0]?.model ?? '?'}; node ${process.version}; ${redisVersion}`;
}

export function build(): void {
  if (process.env.SKIP_BUILD) return;
  log('npm run build (type errors elsewhere are tolerated as long as dist/ is emitted)');
  const b = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (b.status !== 0) log(`build exited with ${b.status}; continuing with the emitted dist/`);
}

/** Runs `fn` with a bounded pool of `concurrency` workers over `items`. */
export async function pool<T>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i] as T, i);
      }
    }),
  );
}
