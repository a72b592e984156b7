import {
  appendFileSync,
  closeSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { StoredDelivery } from '../queue/index.js';

/** The spool refused a delivery: it is over SPOOL_MAX_BYTES (the receiver answers 503). */
export class SpoolFullError extends Error {
  readonly code = 'spool_full';
  constructor(max: number) {
    super(`the disk spool is full (SPOOL_MAX_BYTES=${max})`);
    this.name = 'SpoolFullError';
  }
}

const SEGMENT = /^spool-(\d{15})-(\d{6})\.ndjson$/;

/**
 * An append-only, fsync'd disk spool: one JSON line per delivery, in segment
 * files named so that sorting them gives arrival order. A line is on disk
 * (fdatasync) before `append` returns, so a 202 backed by the spool survives
 * a crash. The drainer reads closed segments only; `rotate` closes the
 * current one. One receiver process per SPOOL_DIR.
 */
export class DiskSpool {
  private fd: number | null = null;
  private current: string | null = null;
  /** Bytes in the segment being written (to undo a failed append). */
  private currentSize = 0;
  private seq = 0;
  private bytes: number;

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {
    mkdirSync(dir, { recursive: true });
    this.bytes = this.segments().reduce((n, f) => n + statSync(join(dir, f)).size, 0);
  }

  /** Segment file names in arrival order. */
  segments(): string[] {
    return readdirSync(this.dir)
      .filter((f) => SEGMENT.test(f))
      .sort();
  }

  /** Bytes held in every segment (what SPOOL_MAX_BYTES bounds). */
  size(): number {
    return this.bytes;
  }

  append(delivery: StoredDelivery): void {
    const line = Buffer.from(JSON.stringify(delivery) + '\n', 'utf8');
    if (this.bytes + line.length > this.maxBytes) throw new SpoolFullError(this.maxBytes);
    if (this.fd === null) this.open();
    const fd = this.fd as number;
    try {
      // writeSync may write part of the buffer (disk full, quota): loop, and on failure cut the
      // segment back so no torn line is left for the next append to glue onto.
      for (let off = 0; off < line.length;) off += writeSync(fd, line, off);
      fdatasyncSync(fd);
    } catch (err) {
      try {
        ftruncateSync(fd, this.currentSize);
      } catch {
        /* the drainer skips a torn tail */
      }
      throw err;
    }
    this.currentSize += line.length;
    this.bytes += line.length;
  }

  /** Closes the segment being written, so the drainer may take it. */
  rotate(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    this.current = null;
  }

  /**
   * The deliveries of a closed segment. A torn last line (crash mid-write) was
   * never acknowledged and is skipped; any other unreadable line (disk damage)
   * is returned in `corrupt` so the drainer can set it aside and carry on.
   */
  read(segment: string): { deliveries: StoredDelivery[]; corrupt: string[] } {
    const text = readFileSync(join(this.dir, segment), 'utf8');
    const lines = text.split('\n');
    const deliveries: StoredDelivery[] = [];
    const corrupt: string[] = [];
    for (const [i, line] of lines.entries()) {
      if (line === '') continue;
      try {
        deliveries.push(JSON.parse(line) as StoredDelivery);
      } catch {
        if (i !== lines.length - 1) corrupt.push(line);
      }
    }
    return { deliveries, corrupt };
  }

  /** Keeps unreadable lines beside the spool (`<segment>.corrupt`) for an operator. */
  quarantine(segment: string, lines: readonly string[]): string {
    const file = join(this.dir, `${segment}.corrupt`);
    appendFileSync(file, lines.map((l) => `${l}\n`).join(''));
    return file;
  }

  /** Deletes a drained segment and makes the deletion durable. */
  remove(segment: string): void {
    const path = join(this.dir, segment);
    const size = statSync(path).size;
    unlinkSync(path);
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
    this.bytes = Math.max(0, this.bytes - size);
  }

  isCurrent(segment: string): boolean {
    return segment === this.current;
  }

  close(): void {
    this.rotate();
  }

  private open(): void {
    const name = `spool-${String(this.now()).padStart(15, '0')}-${String(++this.seq % 1e6).padStart(6, '0')}.ndjson`;
    this.fd = openSync(join(this.dir, name), 'a');
    this.current = name;
    this.currentSize = 0;
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }
}
