import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseEnvelope, toFixture } from '../events/index.js';
import type { IngestSubscriber, StoringFacts } from '../lifecycle/index.js';
import { createRedactor } from '../pii/index.js';

/** What capture needs from a logger (a pino logger fits). */
export interface CaptureLog {
  warn(obj: Record<string, unknown>, msg: string): void;
  debug(obj: Record<string, unknown>, msg: string): void;
}

export interface CaptureOptions {
  /** CAPTURE_DIR; created when absent. */
  dir: string;
  /** CAPTURE_REDACT: replace names, emails, phones and message bodies with stable fakes. */
  redact?: boolean;
  /** Salt of the redaction fakes (see createRedactor). */
  salt?: string;
  /** Webhook path recorded in the fixture (WEBHOOK_PATH). */
  path?: string;
  log?: CaptureLog;
  /** Most captures waiting to be written; more are dropped with a warning (default 10 000). */
  maxPending?: number;
  /** Bytes of pending captures at most (default 64 MiB); past it captures are dropped and counted. */
  maxPendingBytes?: number;
}

/** What capture keeps of a stored delivery. */
export type Stored = Pick<StoringFacts, 'key' | 'bytes' | 'headers' | 'receivedAt'>;

export interface Capture {
  /** Its subscription to the ingest stream: every delivery stored (accepted or spooled; not a duplicate) is kept. */
  readonly subscriber: IngestSubscriber;
  /** Queues the delivery and returns at once (never touches the disk itself). */
  keep(delivery: Stored): void;
  /** Resolves once everything queued so far is on disk (call it on shutdown). */
  flush(): Promise<void>;
  /** Files written and captures dropped so far. */
  readonly stats: { written: number; dropped: number; failed: number };
}

/** A file name that sorts by arrival and says what it holds: `<received_at>_<event>_<key>.json`. */
export function captureFileName(receivedAt: string, event: string | null, key: string): string {
  const safe = (s: string, max: number) => s.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, max);
  return `${safe(receivedAt.replace(/[:]/g, ''), 40)}_${safe(event ?? 'unknown', 60)}_${safe(key, 80)}.json`;
}

/**
 * Capture of verified deliveries as fixtures (`switchyard.delivery/1`, the
 * format of `fixtures/`), for `switchyard replay`. `keep` only appends to an
 * in-memory queue; parsing, redaction and the write happen later on the event
 * loop (`setImmediate`), one file at a time, so a capture never delays the
 * webhook's answer and a slow disk only grows the queue (bounded by
 * `maxPending`; beyond it captures are dropped and counted, never the delivery).
 * Signature, authorization, cookie, token and secret headers are never written
 * (`toFixture` drops them). Each file is written to a temporary name and
 * renamed, so a reader never sees half a fixture.
 */
export function createCapture(opts: CaptureOptions): Capture {
  const redactor = opts.redact ? createRedactor(opts.salt !== undefined ? { salt: opts.salt } : {}) : undefined;
  const max = opts.maxPending ?? 10_000;
  // Bounded by bytes too: 10 000 pending 1 MB bodies would be 10 GB when the capture disk is slow.
  const maxBytes = opts.maxPendingBytes ?? 64 * 1024 * 1024;
  let pendingBytes = 0;
  const queue: Stored[] = [];
  const stats = { written: 0, dropped: 0, failed: 0 };
  let draining: Promise<void> | undefined;
  let dirReady: Promise<unknown> | undefined;

  const writeOne = async (d: Stored): Promise<void> => {
    dirReady ??= mkdir(opts.dir, { recursive: true });
    await dirReady;
    const bytes = redactor ? redactor.body(d.bytes) : Buffer.from(d.bytes.buffer, d.bytes.byteOffset, d.bytes.byteLength);
    const env = parseEnvelope(bytes);
    const fixture = toFixture({
      bytes,
      headers: d.headers,
      receivedAt: d.receivedAt,
      ...(opts.path ? { path: opts.path } : {}),
      description: `captured ${env.name ?? 'delivery'}${redactor ? ' (redacted)' : ''}`,
    });
    const file = join(opts.dir, captureFileName(d.receivedAt, env.name, d.key));
    const tmp = `${file}.tmp-${process.pid}`;
    await writeFile(tmp, `${JSON.stringify(fixture, null, 2)}\n`);
    await rename(tmp, file);
    stats.written++;
  };

  const drain = async (): Promise<void> => {
    // Yield first: the request that queued the capture finishes its answer before any capture work.
    await new Promise((r) => setImmediate(r));
    while (queue.length > 0) {
      const d = queue.shift() as Stored;
      pendingBytes -= d.bytes.byteLength;
      try {
        await writeOne(d);
      } catch (err) {
        stats.failed++;
        opts.log?.warn(
          { err: err instanceof Error ? err.message : String(err), delivery: d.key, dir: opts.dir },
          'capture: could not write a fixture',
        );
      }
    }
    draining = undefined;
  };

  const keep = (d: Stored): void => {
    if (queue.length >= max || pendingBytes + d.bytes.byteLength > maxBytes) {
      stats.dropped++;
      if (stats.dropped === 1 || stats.dropped % 1000 === 0)
        opts.log?.warn(
          { dropped: stats.dropped, max, maxBytes },
          'capture: too many captures pending; dropping (the deliveries themselves are stored)',
        );
      return;
    }
    // Copy: the caller's buffer may be reused after the answer.
    queue.push({ key: d.key, receivedAt: d.receivedAt, bytes: Buffer.from(d.bytes), headers: { ...d.headers } });
    pendingBytes += d.bytes.byteLength;
    draining ??= drain();
  };

  return {
    stats,
    keep,
    subscriber: {
      stored: (e) => {
        if (e.ok && e.outcome !== 'duplicate') keep(e.delivery);
      },
    },
    async flush() {
      while (draining) await draining;
    },
  };
}
