import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Who holds the local state directory (`<SWITCHYARD_HOME>/owner.json`). */
export interface StateOwner {
  readonly pid: number;
  /** `dev`, `start`, `serve` or `work`. */
  readonly command: string;
  readonly startedAt: string;
  /** The receiver's port, when it has one. */
  readonly port?: string | undefined;
  /** The process's start time in clock ticks since boot (Linux), so a recycled pid is not taken for it. */
  readonly since?: number | undefined;
}

/** Another living process holds the state directory: nothing was touched. */
export class StateDirBusyError extends Error {
  readonly code = 'state_dir_busy';
  constructor(
    readonly owner: StateOwner,
    readonly dir: string,
    mine: string,
  ) {
    const port = owner.port ? `, receiver port ${owner.port}` : '';
    super(
      `switchyard ${owner.command} is already running in this directory (pid ${owner.pid}, since ${owner.startedAt}${port}) ` +
        `and owns ${dir} (its managed Redis and local state); nothing was started or changed. ` +
        `Stop it first (Ctrl-C in its terminal, or kill ${owner.pid}), ` +
        `or give this ${mine} a state directory of its own: ` +
        'SWITCHYARD_HOME=<dir> (and PORT/SANDBOX_PORT) for a second, independent instance.',
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

/** A process's start time (field 22 of /proc/<pid>/stat), or undefined off Linux. */
export function startTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[19]);
  } catch {
    return undefined;
  }
}

/** Whether the recorded owner still runs: its pid is alive and, where the system tells, it is the same process. */
export function living(owner: StateOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = startTicks(owner.pid);
  return owner.since === undefined || now === undefined || now === owner.since;
}

/** The owner recorded in `file`; null when absent; 'unreadable' when it cannot be parsed. */
function readOwner(file: string): StateOwner | null | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = JSON.parse(text) as Partial<StateOwner>;
    return typeof parsed.pid === 'number' ? (parsed as StateOwner) : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/**
 * Takes `<dir>/owner.json` for this process, the way a database's pid file
 * works: created whole and exclusively (a hard link of a written temporary
 * file, so it is never seen empty); a file whose process is gone (killed,
 * crashed) is taken over (renamed over, then read back: of two takers, the
 * one whose file stays wins) and its owner returned as `previous`; a living
 * owner is refused with {@link StateDirBusyError} before anything else
 * happens. A file that cannot be read is someone's being written, unless it
 * is older than a few seconds.
 */
export function lockStateDir(dir: string, owner: Omit<StateOwner, 'pid' | 'startedAt' | 'since'>): StateLock {
  const abs = resolve(dir);
  mkdirSync(abs, { recursive: true });
  const file = join(abs, 'owner.json');
  const held = readOwner(file);
  // This process holds it already (`dev` locks before its managed Redis is resolved).
  if (held !== null && held !== 'unreadable' && held.pid === process.pid) return { file, previous: null, release: () => undefined };
  const me: StateOwner = { pid: process.pid, startedAt: new Date().toISOString(), ...owner, since: startTicks(process.pid) };
  const tmp = join(abs, `.owner.${process.pid}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(me)}\n`);
  let previous: StateOwner | null = null;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(tmp, file);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 3) throw err;
      }
      const current = readOwner(file);
      if (current === null) continue; // released meanwhile: try again
      if (current === 'unreadable') {
        const written = statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
        if (Date.now() - written <= 5_000) throw new Error(`${file} is being written by another process; try again`);
      } else if (living(current)) {
        throw new StateDirBusyError(current, dir, owner.command);
      } else {
        previous = current;
      }
      // Take over: rename ours over the dead one's, then read it back after a moment.
      writeFileSync(`${tmp}.take`, `${JSON.stringify(me)}\n`);
      renameSync(`${tmp}.take`, file);
      sleepSync(100);
      const after = readOwner(file);
      if (after !== null && after !== 'unreadable' && after.pid !== process.pid && living(after))
        throw new StateDirBusyError(after, dir, owner.command);
      if (after !== null && after !== 'unreadable' && after.pid === process.pid) break;
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  let released = false;
  return {
    file,
    previous,
    release: () => {
      if (released) return;
      released = true;
      const now = readOwner(file);
      if (now !== null && now !== 'unreadable' && now.pid === process.pid) rmSync(file, { force: true });
    },
  };
}
