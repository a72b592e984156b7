import { formatDuration, printable } from '../util/index.js';
import { matchesRunFilter, type ParkedRun, type RunFilter } from '../queue/index.js';

/** A parked run as `waits --json` gives it. */
export interface WaitRow extends ParkedRun {
  readonly due: string;
  /** ms until due (negative: overdue, being woken). */
  readonly dueInMs: number;
}

/** Parked runs as rows, in their order. */
export function waitRows(runs: readonly ParkedRun[], now: number): WaitRow[] {
  return runs.map((r) => ({ ...r, due: new Date(r.dueAt).toISOString(), dueInMs: r.dueAt - now }));
}

/** The parked runs that pass the filters, soonest due first. */
export function selectWaits(runs: readonly ParkedRun[], now: number, f: RunFilter): WaitRow[] {
  return waitRows(
    runs.filter((r) => matchesRunFilter(r, f, now)),
    now,
  );
}

function when(ms: number): string {
  return ms < 0 ? `overdue ${formatDuration(-ms)}` : `in ${formatDuration(ms)}`;
}

/** The table `switchyard waits` prints (and `waits cancel` before it asks). */
export function formatWaits(rows: readonly WaitRow[], total: number): string {
  if (total === 0) return 'No run is sleeping or waiting.\n';
  if (rows.length === 0) return `No parked run matches (${total} parked in all).\n`;
  const table = [
    ['DUE', 'HANDLER', 'KIND', 'NAME', 'WAITING FOR', 'DELIVERY'],
    ...rows.map((r) =>
      [
        `${r.due} (${when(r.dueInMs)})`,
        r.handler,
        r.kind === 'sleep' ? 'sleep' : 'wait',
        r.name,
        r.kind === 'sleep' ? '-' : `${r.event ?? '?'} ${r.key ?? ''}`.trim(),
        r.deliveryKey,
      ].map(printable),
    ),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const lines = table.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
  return `${lines.join('\n')}\n${rows.length < total ? `(${rows.length} of ${total} parked runs shown)\n` : ''}`;
}
