import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Who holds the local state directory (`<SWITCHYARD_HOME>/owner.json`). */
export interface StateOwner {
  readonly pid: number;
  /** `dev` or `start`. */
  readonly command: string;
  readonly startedAt: string;
  /** The receiver's port, when it has one. */
  readonly port?: string | undefined;
}

/** Another living process holds the state directory: nothing was touched. */
export class StateDirBusyError extends Error {
  readonly code = 'state_dir_busy';
  constructor(readonly owner: StateOwner, readonly dir: string, mine: string) {
    const port = owner.port ? `, receiver port ${owner.port}` : '';
    super(
      `switchyard ${owner.command} is already running in this directory (pid ${owner.pid}, since ${owner.startedAt}${port}) ` +
      `and owns ${dir} (its managed Redis and local state); nothing was started or changed. ` +
      `Stop it first (Ctrl-C in its terminal, or kill ${owner.pid}), ` +
      `or give this ${mine} a state directory of its own: SWITCHYARD_HOME=<dir> (and PORT/SANDBOX_PORT) for a second, independent instance.`,
    );
    this.name = 'StateDirBusyError';
  }
}

/** A held state directory; `release` is safe to call twice. */
export interface StateLock {
  readonly file: string;
  /** The owner found dead when this lock was taken (its process is gone; what it left is to be cleaned up). */
  readonly previous: StateOwner | null;
  release(): void;
}

function living(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A recycled pid: on Linux, only a Node process counts as the owner (switchyard runs on node).
  try {
    return /node|switchyard/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return true;
  }
}

function readOwner(file: string): StateOwner | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<StateOwner>;
    return typeof parsed.pid === 'number' ? (parsed as StateOwner) : null;
  } catch {
    return null;
  }
}

/**
 * Takes `<dir>/owner.json` for this process, the way a database's pid file
 * works: created exclusively; a file whose process is gone (killed, crashed)
 * is taken over and its owner returned as `previous`; a living owner is
 * refused with {@link StateDirBusyError} before anything else happens.
 */
export function lockStateDir(dir: string, owner: Omit<StateOwner, 'pid' | 'startedAt'>): StateLock {
  const abs = resolve(dir);
  mkdirSync(abs, { recursive: true });
  const file = join(abs, 'owner.json');
  const me: StateOwner = { pid: process.pid, startedAt: new Date().toISOString(), ...owner };
  const text = `${JSON.stringify(me)}\n`;
  const held = readOwner(file);
  // This process holds it already (`dev` locks before its managed Redis is resolved).
  if (held?.pid === process.pid) return { file, previous: null, release: () => undefined };
  let previous: StateOwner | null = null;
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, text, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw err;
    }
    const current = readOwner(file);
    if (current && living(current.pid)) throw new StateDirBusyError(current, dir, owner.command);
    previous = current ?? previous;
    rmSync(file, { force: true });
  }
  let released = false;
  return {
    file,
    previous,
    release: () => {
      if (released) return;
      released = true;
      if (readOwner(file)?.pid === process.pid) rmSync(file, { force: true });
    },
  };
}
