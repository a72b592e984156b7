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
  /** The redis-server's process id (undefined only if its start line was not read). */
  readonly pid?: number | undefined;
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
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--appendfsync',
    opts.appendfsync ?? 'everysec',
    '--maxmemory-policy',
    'noeviction',
    '--save',
    '',
    '--protected-mode',
    'yes',
    '--daemonize',
    'no',
    '--loglevel',
    'warning',
  ];
  // Started through a small sh that owns it (OWNER_WATCH): stdin is a pipe only this process
  // writes, so when this process exits by any means (SIGKILL, an out-of-memory kill) the pipe
  // closes and the server is told to stop (SIGTERM: Redis flushes its AOF and exits). In a
  // process group of its own: a Ctrl-C at the terminal reaches this process, which drains its
  // work and then stops the server, never the server first (Redis handles SIGINT itself, and a
  // second one makes it exit without its last fsync).
  const child = spawn('sh', ['-c', OWNER_WATCH, 'switchyard-redis', opts.binary ?? 'redis-server', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  let pid: number | undefined;
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
    pid ??= Number(/^@pid (\d+)$/m.exec(output)?.[1]) || undefined;
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  // Nothing is ever written: the pipe is the owner's liveness; an EPIPE after a failed start is no error.
  child.stdin?.on('error', () => undefined);

  await new Promise<void>((res, rej) => {
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      if (err) {
        // A server that did not come up (or came up too late) is not left behind.
        child.stdin?.end();
        rej(err);
      } else res();
    };
    child.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ENOENT' ? new Error('sh was not found on PATH: the managed redis-server is started through it') : err),
    );
    child.once('exit', (code) =>
      done(code === NOT_FOUND ? new RedisServerMissingError() : new Error(`redis-server exited with code ${code}: ${output.trim()}`)),
    );
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
    get pid() {
      return pid;
    },
    stop: () => stopChild(child, () => pid),
  };
}

/** sh's exit status for a command it cannot find. */
const NOT_FOUND = 127;

/**
 * The owner watch (POSIX sh; `$1` the binary, the rest its arguments). The
 * server runs in the background; a reader waits for end-of-file on the
 * owner's pipe (fd 3, a copy of stdin: background commands of a
 * non-interactive sh otherwise read /dev/null) and then sends it SIGTERM. The
 * shell ignores SIGINT (the owner decides when the server stops), forwards
 * SIGTERM and SIGHUP, and once the server is gone stops the reader (so it can
 * never signal a recycled pid) and exits with the server's status.
 */
const OWNER_WATCH = [
  'bin=$1; shift',
  'command -v "$bin" >/dev/null 2>&1 || { echo "$bin: not found" >&2; exit 127; }',
  "trap '' INT",
  'exec 3<&0',
  '"$bin" "$@" 3<&- </dev/null &',
  'pid=$!',
  'echo "@pid $pid"',
  '(read -r _ <&3; kill -TERM "$pid" 2>/dev/null) &',
  'reader=$!',
  'exec 3<&-',
  'trap \'kill -TERM "$pid" 2>/dev/null\' TERM HUP',
  'while :; do wait "$pid"; status=$?; kill -0 "$pid" 2>/dev/null || { kill "$reader" 2>/dev/null; exit "$status"; }; done',
].join('\n');

/** Closes the owner's pipe (the watch stops the server: AOF flushed); SIGKILL to both after 5 s. */
function stopChild(child: ChildProcess, pid: () => number | undefined): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    const timer = setTimeout(() => {
      const server = pid();
      if (server !== undefined)
        try {
          process.kill(server, 'SIGKILL');
        } catch {
          /* gone */
        }
      child.kill('SIGKILL');
    }, 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      res();
    });
    child.stdin?.end();
  });
}

/** Minimal RESP PING over a raw socket, so start-up needs no client library. */
async function ping(port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  return new Promise((res) => {
    const sock = connect({ host: '127.0.0.1', port });
    const finish = (ok: boolean) => {
      sock.destroy();
      res(ok);
    };
    sock.setTimeout(500, () => finish(false));
    sock.once('error', () => finish(false));
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.once('data', (d) => finish(d.toString().startsWith('+PONG')));
  });
}
