import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

/** Raised when `redis-server` is not installed; the message says how to install it. */
export class RedisServerMissingError extends Error {
  readonly code = 'redis_server_missing';
  constructor() {
    super(
      'redis-server was not found on PATH. Install it (Debian/Ubuntu: `sudo apt-get install -y redis-server`, ' +
        'macOS: `brew install redis`) or set REDIS_URL to an existing Redis.',
    );
  }
}

export interface ManagedRedis {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Stops the server (SHUTDOWN semantics via SIGTERM: AOF is flushed). */
  stop(): Promise<void>;
}

export interface ManagedRedisOptions {
  /** Data directory; created when absent. AOF files live here. */
  dir: string;
  /** 0 (default) picks a free loopback port. */
  port?: number;
  /** `always` fsyncs every write (the test default for the restart-durability test). */
  appendfsync?: 'always' | 'everysec';
  binary?: string;
}

/** A free TCP port on 127.0.0.1 (the kernel picks it). */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

/**
 * Starts a loopback-only redis-server child with AOF on and `noeviction`,
 * the settings Switchyard needs so that an acknowledged delivery survives a
 * restart and is never evicted. Resolves once the server accepts connections.
 */
export async function startManagedRedis(opts: ManagedRedisOptions): Promise<ManagedRedis> {
  const dir = resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  const port = opts.port && opts.port > 0 ? opts.port : await freePort();
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dir,
    '--appendonly', 'yes',
    '--appendfsync', opts.appendfsync ?? 'everysec',
    '--maxmemory-policy', 'noeviction',
    '--save', '',
    '--protected-mode', 'yes',
    '--daemonize', 'no',
    '--loglevel', 'warning',
  ];
  const child = spawn(opts.binary ?? 'redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { output += d.toString(); });

  await new Promise<void>((res, rej) => {
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      if (err) rej(err);
      else res();
    };
    child.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ENOENT' ? new RedisServerMissingError() : err));
    child.once('exit', (code) => done(new Error(`redis-server exited with code ${code}: ${output.trim()}`)));
    const started = Date.now();
    const timer = setInterval(() => {
      void ping(port).then((ok) => {
        if (ok) done();
        else if (Date.now() - started > 10_000) done(new Error(`redis-server did not start within 10 s: ${output.trim()}`));
      });
    }, 25);
  });

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    stop: () => stopChild(child),
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => { clearTimeout(timer); res(); });
    child.kill('SIGTERM');
  });
}

/** Minimal RESP PING over a raw socket, so start-up needs no client library. */
async function ping(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((res) => {
    const sock = connect({ host: '127.0.0.1', port });
    const finish = (ok: boolean) => { sock.destroy(); res(ok); };
    sock.setTimeout(500, () => finish(false));
    sock.once('error', () => finish(false));
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.once('data', (d) => finish(d.toString().startsWith('+PONG')));
  });
}
