import type { limiterScripts } from './rate-limiter-lua.js';

// This process's waiters of a Redis limiter (rate-limiter-redis.ts): one line per level,
// each waiter registered in Redis behind the one ahead of it, so Redis ranks them in the
// order of the line.

/** One acquire waiting in this process. */
export interface LocalWaiter {
  readonly member: string;
  /** Resolves when the waiter is the first of its level in this process. */
  readonly turn: Promise<void>;
  readonly wake: () => void;
  /** Its score in Redis once registered (undefined: the first poll registers it). */
  score: Promise<number | undefined>;
  /**
   * Settles once it is registered in Redis (or gone): the waiter behind it registers
   * only then, so Redis ranks this process's waiters in the order of its line.
   */
  readonly registered: Promise<void>;
  readonly markRegistered: () => void;
  /** Granted or given up: a waiter not yet registered then never registers. */
  settled: boolean;
}

/** What the lines of one Redis limiter need. */
export interface ProcessLines {
  readonly scripts: Pick<ReturnType<typeof limiterScripts>, 'enqueue' | 'leave'>;
  readonly staleMs: number;
  /** This limiter's id in waiter names (`<proc>:<seq>`): how Redis tells its waiters' liveness. */
  readonly proc: string;
  seq: number;
  /**
   * Waiters of this process queue up locally, one line per level, and only the
   * first of each line polls Redis: otherwise every waiting job wakes when a slot
   * frees, and all but one poll in vain. The others are registered in Redis
   * (rateEnqueue) so they keep their place in the order across processes.
   */
  readonly lines: LocalWaiter[][];
}

/** A new waiter at the end of this process's line of `level`: woken at once when first, else registered in Redis behind the one ahead. */
export function joinLine(l: ProcessLines, level: number): LocalWaiter {
  const line = l.lines[level] as LocalWaiter[];
  const member = `${l.proc}:${(l.seq++).toString(36).padStart(10, '0')}`;
  let wake!: () => void;
  let markRegistered!: () => void;
  const turn = new Promise<void>((r) => {
    wake = r;
  });
  const registered = new Promise<void>((r) => {
    markRegistered = r;
  });
  const w: LocalWaiter = { member, turn, wake, score: Promise.resolve(undefined), registered, markRegistered, settled: false };
  const before = line.at(-1);
  line.push(w);
  if (!before) w.wake();
  else registerBehind(l, w, before, level);
  return w;
}

/**
 * Registers `w` in Redis after the waiter ahead of it, never before: the first of a line registers with
 * its first poll, and a waiter behind it whose enqueue reached Redis first would rank ahead of
 * it there. Redis would then keep a free slot for a waiter that does not poll while the one
 * polling is told to wait: the slot stays unused until the window turns (the pacing showed it).
 */
function registerBehind(l: ProcessLines, w: LocalWaiter, before: LocalWaiter, level: number): void {
  const entered = before.registered.then(async () =>
    w.settled ? undefined : Number(await l.scripts.enqueue(w.member, level, l.proc, l.staleMs)),
  );
  w.score = entered.catch(() => undefined);
  // Registered once its entry is in Redis (or it is gone); after a failed enqueue, with its first poll.
  void entered.then(w.markRegistered, () => undefined);
}

export function waitTurn(w: LocalWaiter, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return w.turn;
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void w.turn.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/** Granted or given up: leaves the line (waking the next), and Redis's waiters when not granted. */
export function leaveLine(l: ProcessLines, w: LocalWaiter, level: number, granted: boolean): void {
  const line = l.lines[level] as LocalWaiter[];
  w.settled = true;
  const i = line.indexOf(w);
  if (i >= 0) line.splice(i, 1);
  if (i === 0) line[0]?.wake();
  // After its registration, if any, has reached Redis (else the entry would come back).
  // Best effort: a waiter left behind is dropped once its process stops polling.
  if (!granted) void w.score.then(() => l.scripts.leave(w.member)).catch(() => undefined);
  // Never before the waiter ahead has registered: its score settles only after that.
  void w.score.then(w.markRegistered);
}
