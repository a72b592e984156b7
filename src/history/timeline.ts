import { printable as p, printableLines } from '../util/index.js';
import type { DeliverySummary, Trace } from './read.js';
import type { AttemptEntry, CallRecord, FanOutEntry, OperatorEntry, StepRecord, WaitRecord } from './record.js';
import type { RerunLink, RerunOf } from './rerun-link.js';

/** `+12 ms`, `+3.4 s`, `+5m 02s`, `+2h 10m` after `t0`. */
export function relative(ms: number): string {
  const sign = ms < 0 ? '-' : '+';
  const a = Math.abs(ms);
  if (a < 1_000) return `${sign}${Math.round(a)} ms`;
  if (a < 60_000) return `${sign}${(a / 1_000).toFixed(1)} s`;
  if (a < 3_600_000) return `${sign}${Math.floor(a / 60_000)}m ${String(Math.floor((a % 60_000) / 1_000)).padStart(2, '0')}s`;
  return `${sign}${Math.floor(a / 3_600_000)}h ${String(Math.floor((a % 3_600_000) / 60_000)).padStart(2, '0')}m`;
}

/** `6d 23h`, `5h 10m`, `12m`. */
function span(ms: number): string {
  const d = Math.floor(ms / 86_400_000);
  const h = Math.floor((ms % 86_400_000) / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m`;
}

const failed = (c: CallRecord) => c.status === 0 || c.status >= 400;

function callLine(c: CallRecord): string {
  const parts = [
    `${failed(c) ? '✗' : '·'} ${p(c.method)} ${p(c.path)}`,
    c.status ? String(c.status) : 'no answer',
    c.replayed ? 'replayed' : '',
    `${c.ms} ms`,
    c.waitMs > 0 ? `waited ${c.waitMs} ms for the rate limiter` : '',
    c.try > 1 ? `(client try ${c.try})` : '',
    c.idempotencyKey ? `Idempotency-Key ${p(c.idempotencyKey)}` : '',
    `[${p(c.op)}]`,
  ].filter(Boolean);
  return `${parts.join('  ')}${c.error ? `\n                 ${p(c.error)}` : ''}`;
}

/** One line per sleep or wait (`switchyard trace`). */
export function waitLine(w: WaitRecord): string {
  const due = new Date(w.dueAt).toISOString();
  const what = w.kind === 'sleep' ? `sleep ${p(w.name)}` : `wait ${p(w.name)}${w.event ? ` for ${p(w.event)}` : ''}`;
  switch (w.outcome) {
    case undefined:
      return `${what}: parked until ${due}`;
    case 'due':
      return `${what}: over (due ${due})`;
    case 'event':
      return `${what}: matched by ${p(w.eventKey ?? '?')}`;
    case 'timeout':
      return `${what}: timed out at ${due}, returned null`;
    case 'held':
      return `${what}: due ${due}, held: ${p(w.eventKey ?? '?')}, received before it, is not fanned out yet`;
    case 'cancelled':
      return `cancelled by ${p(w.eventKey ?? '?')}${w.event ? ` (${p(w.event)}, cancelOn)` : ''}: no further step ran`;
  }
}

/** An operator's cancel or wake of the parked run (`switchyard trace`). */
export function operatorLine(e: OperatorEntry): string {
  const what = `${e.waitKind === 'sleep' ? 'sleep' : 'wait'} ${p(e.wait)}`;
  const who = `by ${p(e.by)} (${p(e.via)})${e.reason ? `: ${p(e.reason)}` : ''}`;
  if (e.action === 'cancel') return `${p(e.handler)}  cancelled in ${what} ${who}; no further step runs`;
  const ends = e.waitKind === 'sleep' ? 'ends now' : 'returns null now, as if it timed out';
  return `${p(e.handler)}  woken in ${what} ${who}: it ${ends}`;
}

function stepSource(source: StepRecord['source']): string {
  return source === 'stored' ? 'taken from the store (ran before)' : source === 'run' ? 'ran' : 'failed';
}

function fanoutText(e: FanOutEntry): string {
  if (e.duplicateChange !== undefined)
    return `duplicate change ${p(e.duplicateChange)}: another delivery of it was dispatched; nothing runs`;
  if (e.handlers.length === 0) return 'no handler subscribes to this event';
  return e.handlers.map((h) => `${p(h.id)} (${p(h.placement)}, ${p(h.priority)})`).join(', ');
}

function attemptLines(a: AttemptEntry): string[] {
  const job = a.job ? ` (job ${p(a.job)})` : '';
  const outcome = a.outcome === 'dead' ? 'DEAD (dead-lettered)' : a.outcome;
  const head =
    `${p(a.handler)}  attempt ${a.attempt}${job}  → ${outcome}` + `${a.skipped ? ` (${p(a.skipped)})` : ''}  ${a.at - a.startedAt} ms`;
  const out = [head];
  if (a.error) out.push(`               ${p(a.error.class)}: ${printableLines(a.error.message).join('\n               ')}`);
  for (const s of a.steps) out.push(`               step ${p(s.name)}: ${stepSource(s.source)}`);
  for (const w of a.waits ?? []) out.push(`               ${waitLine(w)}`);
  for (const c of a.calls) out.push(`               ${callLine(c)}`);
  if (a.callsDropped) out.push(`               … ${a.callsDropped} more calls not kept (size cap)`);
  if (a.calls.length === 0 && a.outcome !== 'skipped' && a.outcome !== 'cancelled' && a.outcome !== 'wait')
    out.push('               (no API calls)');
  return out;
}

/** A re-run's own trace: what it re-ran. */
function rerunOfLine(r: RerunOf): string {
  const from = r.fromStep ? `, from step ${p(r.fromStep)}` : '';
  return `rerun of ${p(r.key)} (run ${p(r.job)}), ${r.batch ? `batch ${p(r.batch)}` : 'no batch'}${from}`;
}

/** One re-run on its original's trace. */
function rerunLine(r: RerunLink): string {
  const from = r.fromStep ? `, from step ${p(r.fromStep)}` : '';
  const batch = r.batch ? `batch ${p(r.batch)}` : 'no batch';
  return `rerun    ${p(r.id)} (${batch}${from}) of ${p(r.handler)}: ${p(r.outcome)}  → switchyard trace ${p(r.ref)}`;
}

/** `switchyard trace`'s text: the delivery (or schedule run), then each entry with its time relative to receipt (the tick). */
export function formatTrace(t: Trace): string {
  const first = t.entries[0];
  const t0 = t.receivedAt ? Date.parse(t.receivedAt) : first ? (first.kind === 'attempt' ? first.startedAt : first.at) : 0;
  const lines: string[] = [];
  const schedule = t.source === 'schedule';
  const facts = [
    p(t.event ?? 'event ?'),
    t.conversation ? `conversation ${p(t.conversation)}` : '',
    t.contact ? `contact ${p(t.contact)}` : '',
  ].filter(Boolean);
  if (schedule) {
    lines.push(`schedule run ${p(t.key)}`);
    if (t.receivedAt) lines.push(`tick     ${p(t.receivedAt)}  (run by the schedules queue; not a delivery from the workspace)`);
  } else if (t.rerunOf) lines.push(`rerun    ${p(t.key)}  ${facts.join('  ')}`, rerunOfLine(t.rerunOf));
  else lines.push(`delivery ${p(t.key)}  ${facts.join('  ')}`);
  if (t.receivedAt && !schedule) {
    const made = t.source !== null && t.source !== 'webhook';
    const bytes = t.bytes !== null ? `  ${t.bytes} bytes` : '';
    const verified = t.secretIndex !== null ? `  verified with secret #${t.secretIndex}` : '';
    const origin = made ? `  source ${p(t.source)} (made by Switchyard, not sent by the workspace)` : verified;
    lines.push(`received ${p(t.receivedAt)}${bytes}${origin}`);
  }
  for (const r of t.reruns ?? []) lines.push(rerunLine(r));
  if (t.duplicates > 0) lines.push(`repeats  ${t.duplicates} (answered 200 duplicate; nothing more was done)`);
  const handlers = Object.entries(t.handlers);
  if (handlers.length) lines.push(`${schedule ? 'schedule' : 'handlers'} ${handlers.map(([h, s]) => `${p(h)}: ${p(s)}`).join(', ')}`);
  if (t.state === 'invalid') lines.push('state    invalid: dead-lettered in the events queue without fan-out');
  lines.push('');
  const at = (ms: number) => relative(ms - t0).padEnd(12);
  if (t.receivedAt) lines.push(`  ${at(t0)} ${schedule ? 'tick' : 'received'}`);
  if (t.queuedAt) lines.push(`  ${at(Date.parse(t.queuedAt))} queued (events)`);
  for (const e of t.entries) {
    switch (e.kind) {
      case 'fanout':
        lines.push(`  ${at(e.at)} fan-out: ${fanoutText(e)}`);
        break;
      case 'invalid':
        lines.push(`  ${at(e.at)} invalid: ${p(e.reason)}`);
        break;
      case 'attempt': {
        const [head, ...rest] = attemptLines(e);
        lines.push(`  ${at(e.startedAt)} ${head}`, ...rest);
        break;
      }
      case 'body':
        lines.push(`  ${at(e.at)} body (redacted):`, ...printableLines(e.body).map((l) => `               ${l}`));
        break;
      case 'operator':
        lines.push(`  ${at(e.at)} ${operatorLine(e)}`);
        break;
    }
  }
  if (t.expiresInMs !== null) lines.push('', `(history kept ${span(t.expiresInMs)} more; HISTORY_TTL)`);
  return `${lines.join('\n')}\n`;
}

/** A handler's latest re-run on a `deliveries` row: ` (rerun <id>:<outcome>)`, or nothing. */
function rerunState(r: DeliverySummary, handler: string): string {
  const last = (r.reruns ?? []).filter((x) => x.handler === handler).at(-1);
  return last ? ` (rerun ${last.id}:${last.outcome})` : '';
}

/** `switchyard deliveries`' table. */
export function formatDeliveries(rows: readonly DeliverySummary[], now = Date.now()): string {
  if (rows.length === 0) return 'no deliveries in the history match\n';
  const ago = (iso: string | null) => (iso ? relative(now - Date.parse(iso)).replace('+', '') + ' ago' : '?');
  const table = rows.map((r) =>
    [
      r.key,
      r.event ?? '?',
      ago(r.receivedAt),
      r.conversation ?? '-',
      r.contact ?? '-',
      r.state === 'invalid'
        ? 'invalid'
        : Object.entries(r.handlers)
            .map(([h, s]) => `${h}:${s}${rerunState(r, h)}`)
            .join(' ') ||
          (r.state ?? '-'),
    ].map(p),
  );
  const head = ['KEY', 'EVENT', 'RECEIVED', 'CONV', 'CONTACT', 'HANDLERS'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return `${[line(head), ...table.map(line)].join('\n')}\n`;
}
