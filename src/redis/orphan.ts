import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';

/** A redis-server found serving a data directory (left by an owner that is gone). */
export interface FoundServer {
  /** Its process id, when this machine shows processes (Linux /proc). */
  readonly pid?: number;
  /** Its loopback port, when known (from the URL file its owner left). */
  readonly port?: number;
  /** A living Node process that still owns it (a running Switchyard of an older version, which kept no owner file). */
  readonly owner?: number | undefined;
}

/**
 * redis-server processes of this user whose working directory is `dir`
 * (redis-server changes into its `--dir`). Linux only (/proc); elsewhere none.
 */
function serversByProc(dir: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      // The command name (Debian's redis-server is a link to redis-check-rdb; its title is rewritten).
      if (readFileSync(`/proc/${e}/comm`, 'utf8').trim() !== 'redis-server') continue;
      if (realpathSync(readlinkSync(`/proc/${e}/cwd`)) === dir) found.push(Number(e));
    } catch {
      // Gone meanwhile, or another user's process.
    }
  }
  return found;
}

/** The data directory of the redis-server on 127.0.0.1:`port`, or null when none answers. */
async function dirOnPort(port: number): Promise<string | null> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const reply = await client.config('GET', 'dir');
    return reply[1] ?? null;
  } catch {
    return null;
  } finally {
    client.disconnect();
  }
}

/** The port of a `redis://127.0.0.1:<port>` URL file, or undefined. */
function portOfUrlFile(file: string): number | undefined {
  try {
    const m = /^redis:\/\/127\.0\.0\.1:(\d+)\s*$/.exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A redis-server still serving the managed data directory `dir`: found by
 * its process (Linux) or by the port in `urlFile` answering with that
 * directory (any system, and servers of older versions that renamed their
 * process title).
 */
export async function findServerOn(dir: string, urlFile: string): Promise<FoundServer | null> {
  const abs = real(dir);
  const [pid] = serversByProc(abs);
  const port = portOfUrlFile(urlFile);
  const answered = port === undefined ? null : await dirOnPort(port);
  const onPort = answered !== null && real(answered) === abs;
  if (pid === undefined && !onPort) return null;
  return { ...(pid === undefined ? {} : { pid, owner: nodeOwner(pid) }), ...(onPort ? { port } : {}) };
}

/** The path with its links resolved (a symlinked SWITCHYARD_HOME, macOS's /var), or as given when it does not exist. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** Parent pid and command name of a process (Linux /proc), or null. */
function parentOf(pid: number): { ppid: number; comm: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return { ppid, comm: readFileSync(`/proc/${ppid}/comm`, 'utf8').trim() };
  } catch {
    return null;
  }
}

/**
 * The Node process that still owns a redis-server (its parent, or the parent
 * of the owner watch `sh` between them), or undefined when it has none: an
 * orphan is adopted by init or a subreaper, never by a node process.
 */
function nodeOwner(pid: number): number | undefined {
  let up = parentOf(pid);
  if (up?.comm === 'sh') up = parentOf(up.ppid);
  return up && up.ppid > 1 && /^node/.test(up.comm) ? up.ppid : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops a server found on a data directory the way its owner would have:
 * SIGTERM (or SHUTDOWN over its port), so it flushes its append-only file,
 * and waits up to `ms` for it to be gone. True when it is gone.
 */
export async function stopFoundServer(found: FoundServer, ms = 15_000): Promise<boolean> {
  if (found.pid !== undefined) {
    try {
      process.kill(found.pid, 'SIGTERM');
    } catch {
      /* gone already */
    }
  } else if (found.port !== undefined) {
    const client = new Redis({
      host: '127.0.0.1',
      port: found.port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    await client
      .connect()
      .then(() => client.shutdown())
      .catch(() => undefined);
    client.disconnect();
  }
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const gone = found.pid !== undefined ? !alive(found.pid) : (await dirOnPort(found.port as number)) === null;
    if (gone) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
