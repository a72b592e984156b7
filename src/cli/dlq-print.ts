import { type DeadDetail, type DeadEntry, EVENTS_QUEUE, SCHEDULES_QUEUE } from '../queue/index.js';
import { printable as p, printableLines } from '../util/index.js';

// How `switchyard dlq` prints dead jobs: the table of \`list\` and the details of \`show\`.

export const age = (ms: number | null): string => {
  if (ms === null) return '?';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : s < 172_800 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86_400)}d`;
};

const REASON_WIDTH = 120;

/**
 * The first line of a reason in at most `max` characters, cut at a word
 * boundary with an ellipsis when it is longer (or has more lines); a single
 * word longer than `max` is cut inside it. `dlq show` prints it whole.
 */
export function shortReason(reason: string, max = REASON_WIDTH): string {
  const [first = '', ...more] = reason.trim().split('\n');
  const line = first.trimEnd();
  if (line.length <= max && more.length === 0) return line;
  if (line.length <= max - 2) return `${line} …`;
  const room = line.slice(0, max - 1);
  // The character after the room counts: a space there means the room ends with a whole word.
  const space = line.slice(0, max).search(/\s\S*$/);
  return `${(space > max / 2 ? room.slice(0, space) : room).replace(/[\s,;:.-]+$/, '')}…`;
}

export function table(entries: readonly DeadEntry[]): string {
  if (entries.length === 0) return 'no dead-lettered jobs match\n';
  const rows = entries.map((e) =>
    [e.id, e.queue, e.event ?? '?', e.handler ?? '-', age(e.failedAt), String(e.attempts), shortReason(e.reason)].map(p),
  );
  const head = ['ID', 'QUEUE', 'EVENT', 'HANDLER', 'AGE', 'TRIES', 'REASON'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return `${[line(head), ...rows.map(line)].join('\n')}\n${entries.length} dead-lettered\n`;
}

/** `dlq show`'s details of one dead job. */
export function details(d: DeadDetail): string {
  let s = `${p(d.id)}  (queue ${p(d.queue)})\n  delivery:  ${p(d.key)}\n  event:     ${p(d.event ?? '?')}\n`;
  if (d.handler) s += `  handler:   ${p(d.handler)}\n`;
  const failedAt = d.failedAt ? new Date(d.failedAt).toISOString() : '?';
  s += `  received:  ${p(d.receivedAt ?? '?')}\n  failed:    ${failedAt} (${age(d.failedAt)} ago)\n`;
  s += `  attempts:  ${d.attempts} of ${d.maxAttempts}\n  reason:    ${printableLines(d.reason).join('\n             ')}\n`;
  // A schedule run's history is kept under its key (schedule:<id>:<tick>) as a delivery's.
  s += `  trace:     switchyard trace ${p(d.key)}\n`;
  if (d.stacktrace.length) {
    const errors = d.stacktrace.map((st, i) => `    [${i + 1}] ${printableLines(st).slice(0, 4).join('\n        ')}`);
    s += `  errors (latest attempts):\n${errors.join('\n')}\n`;
  }
  const payloadLabel = d.queue === EVENTS_QUEUE ? 'raw body' : d.queue === SCHEDULES_QUEUE ? 'run' : 'event';
  s += `  ${payloadLabel}:\n${printableLines(d.payload)
    .map((l) => `    ${l}`)
    .join('\n')}\n\n`;
  return s;
}
