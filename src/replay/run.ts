import type { Writable } from 'node:stream';
import { printable, printableLines } from '../util/index.js';
import { withNewId } from './filter.js';
import type { ReplayItem } from './inputs.js';
import type { ReplayOutcome, ReplayOutcomeKind, ReplayTarget } from './targets.js';

/** Totals of a replay; `--json` prints it as is. */
export interface ReplaySummary {
  total: number;
  accepted: number;
  duplicate: number;
  rejected: number;
  failed: number;
  ms: number;
  /** Deliveries per second over the whole run. */
  rate: number;
  /** Each rejected or failed delivery, with why. */
  problems: { source: string; key: string; kind: ReplayOutcomeKind; detail: string }[];
}

/** Receives each outcome as it arrives, then the end. */
export interface ReplayReporter {
  outcome(item: ReplayItem, outcome: ReplayOutcome, done: number, total: number): void;
  end(summary: ReplaySummary): void;
}

export interface RunReplayOptions {
  concurrency?: number;
  newIds?: boolean;
  reporter?: ReplayReporter;
  signal?: AbortSignal;
}

/**
 * Sends every item through `target` with at most `concurrency` in flight,
 * keeping no order between them (each delivery is independent). Stops
 * starting new ones when `signal` aborts.
 */
export async function runReplay(items: readonly ReplayItem[], target: ReplayTarget, opts: RunReplayOptions = {}): Promise<ReplaySummary> {
  const started = performance.now();
  const summary: ReplaySummary = { total: items.length, accepted: 0, duplicate: 0, rejected: 0, failed: 0, ms: 0, rate: 0, problems: [] };
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !opts.signal?.aborted) {
      const original = items[next++] as ReplayItem;
      const item = opts.newIds ? withNewId(original) : original;
      const outcome = await target(item);
      summary[outcome.kind]++;
      if (outcome.kind === 'rejected' || outcome.kind === 'failed') {
        summary.problems.push({ source: item.source, key: outcome.key, kind: outcome.kind, detail: outcome.detail ?? '' });
      }
      done++;
      opts.reporter?.outcome(item, outcome, done, items.length);
    }
  };
  const n = Math.max(1, Math.min(opts.concurrency ?? 8, items.length || 1));
  await Promise.all(Array.from({ length: n }, worker));
  summary.ms = Math.round(performance.now() - started);
  summary.rate = summary.ms > 0 ? Math.round((done / summary.ms) * 1000 * 10) / 10 : done;
  opts.reporter?.end(summary);
  return summary;
}

/** Exit status of a replay: 1 when anything failed or was rejected. */
export const replayFailed = (s: ReplaySummary): boolean => s.failed > 0 || s.rejected > 0;

export function formatSummary(s: ReplaySummary): string {
  const outcomes = `${s.accepted} accepted, ${s.duplicate} duplicate, ${s.rejected} rejected, ${s.failed} failed`;
  return `${s.total} deliveries in ${(s.ms / 1000).toFixed(2)} s (${s.rate}/s): ${outcomes}\n`;
}

const label = (o: ReplayOutcome): string => `${o.kind.padEnd(9)} ${printable(o.event ?? '?').padEnd(26)} ${printable(o.key)}`;

/** The --inline lines (a handler's reason, the API's answers in them: data), each escaped. */
const shownLines = (lines: readonly string[]): string => lines.flatMap((l) => printableLines(l)).join('\n');

/** The item's source and the outcome's detail, escaped (a file name or an answer's text is data). */
const where = (item: ReplayItem, o: ReplayOutcome): string =>
  `${printable(item.source)}${o.detail ? `\n  ${printableLines(o.detail).join('\n  ')}` : ''}`;

/**
 * Plain lines (not a TTY, or --verbose): one per delivery with its outcome, the
 * handler lines of --inline, and the reason of a failure.
 */
export function lineReporter(out: Writable, opts: { quietAccepted?: boolean } = {}): ReplayReporter {
  return {
    outcome(item, o) {
      if (opts.quietAccepted && (o.kind === 'accepted' || o.kind === 'duplicate') && !o.lines?.length) return;
      let text = `${label(o)}  ${where(item, o)}\n`;
      if (o.lines?.length) text += `${shownLines(o.lines)}\n`;
      out.write(text);
    },
    end(s) {
      out.write(formatSummary(s));
    },
  };
}

/**
 * A progress bar redrawn in place on a TTY (`\r`), with problems printed above
 * it as they happen; lines of --inline are printed too.
 */
export function progressReporter(out: Writable, width = 30): ReplayReporter {
  let last = 0;
  const counts = { accepted: 0, duplicate: 0, rejected: 0, failed: 0 };
  const draw = (done: number, total: number) => {
    const filled = total === 0 ? width : Math.round((done / total) * width);
    const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
    const tally = `ok ${counts.accepted}  dup ${counts.duplicate}  rejected ${counts.rejected}  failed ${counts.failed}`;
    out.write(`\r[${bar}] ${done}/${total}  ${tally}`);
  };
  return {
    outcome(item, o, done, total) {
      counts[o.kind]++;
      if (o.kind === 'rejected' || o.kind === 'failed' || o.lines?.length) {
        out.write(`\r\x1b[K${label(o)}  ${where(item, o)}\n${o.lines?.length ? `${shownLines(o.lines)}\n` : ''}`);
        draw(done, total);
        return;
      }
      const now = Date.now();
      if (now - last > 50 || done === total) {
        last = now;
        draw(done, total);
      }
    },
    end(s) {
      draw(s.total, s.total);
      out.write(`\n${formatSummary(s)}`);
    },
  };
}
