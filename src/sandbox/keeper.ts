import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { decodeSnapshot, encodeSnapshot, type SandboxSnapshot } from './snapshot.js';

/** A kept sandbox file that cannot be read back: the message says which file and what to do. */
export class KeptStateError extends Error {
  override readonly name = 'KeptStateError';
}

/** When a change is written: this long after the last one, and no later than `maxWaitMs` after the first unsaved one. */
export const SAVE_DEBOUNCE_MS = 200;
export const SAVE_MAX_WAIT_MS = 1_000;

/**
 * Keeps a sandbox in one file: `load()` once at start; `touch()` after each
 * change writes it shortly after (debounced, yet at least every `maxWaitMs`
 * while changes keep coming, so a SIGKILL loses at most about that much);
 * `close()` writes what is left. Each write replaces the file whole (a new
 * file renamed over it), so a crash mid-write leaves the previous one.
 */
export class StateKeeper {
  private dirtySince: number | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly file: string,
    private readonly take: () => SandboxSnapshot,
    private readonly timing = { debounceMs: SAVE_DEBOUNCE_MS, maxWaitMs: SAVE_MAX_WAIT_MS },
  ) {}

  /** The saved sandbox, or null when there is none yet. */
  load(): SandboxSnapshot | null {
    if (!existsSync(this.file)) return null;
    try {
      return decodeSnapshot(readFileSync(this.file, 'utf8'));
    } catch (err) {
      throw new KeptStateError(
        `cannot read the kept sandbox ${this.file}: ${(err as Error).message}; delete the file to start a fresh sandbox`,
        { cause: err },
      );
    }
  }

  /** Something changed: write it soon. */
  touch(): void {
    const now = Date.now();
    this.dirtySince ??= now;
    if (this.timer) clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.timing.debounceMs, this.dirtySince + this.timing.maxWaitMs - now));
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  /** Writes now when anything changed since the last write. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.dirtySince === null) return;
    this.dirtySince = null;
    this.write(this.take());
  }

  /** Writes what is left; nothing is written after. */
  close(): void {
    this.flush();
  }

  private write(snapshot: SandboxSnapshot): void {
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    // The file holds the sandbox's tokens: readable by its owner only.
    writeFileSync(tmp, encodeSnapshot(snapshot), { mode: 0o600 });
    renameSync(tmp, this.file);
  }
}
