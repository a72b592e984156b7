import { formatDuration } from '../handler/index.js';
import type { RerunPlan, RerunSelection, RerunStatus } from '../rerun/index.js';
import { printable } from '../util/index.js';

const n = (x: number) => x.toLocaleString('en-US');

/** The plan as `rerun` prints it before it asks. */
export function formatPlan(plan: RerunPlan): string {
  const b = plan.budget;
  const rows = plan.byEvent.map(
    (e) => `  ${e.event.padEnd(28)} ${n(e.deliveries).padStart(8)} deliveries ${n(e.calls).padStart(9)} API calls`,
  );
  const lines = [
    `rerun plan: handler ${plan.handler}, ${n(plan.items.length)} deliveries to run again as new runs` +
      (describeSelection(plan.selection) ? ` (${describeSelection(plan.selection)})` : ''),
    ...rows,
    ...(rows.length > 1
      ? [`  ${'total'.padEnd(28)} ${n(plan.items.length).padStart(8)} deliveries ${n(plan.calls).padStart(9)} API calls`]
      : []),
    `  API calls: about ${n(plan.calls)}, what the original runs' latest attempts made` +
      (plan.unmeasured ? ` (${n(plan.unmeasured)} with no attempt recorded, counted as 0)` : ''),
    `  budget:    RERUN_SHARE ${b.share} of WORKSPACE_API_BURST ${b.burst} = ${b.callsPer10s} calls per 10 s, low priority (live traffic keeps the rest)`,
    `  time:      about ${plan.calls ? formatDuration(plan.estimatedMs) : 'what the runs take (no API calls recorded)'} at that share`,
  ];
  for (const s of plan.skipped) lines.push(`  left out:  ${n(s.count)} ${s.count === 1 ? 'delivery' : 'deliveries'}: ${s.reason}`);
  if (plan.more)
    lines.push(`  (the history holds more deliveries than the ${n(plan.scanned)} read: narrow with --since or the other filters)`);
  return `${lines.join('\n')}\n`;
}

/** One line of progress: done/failed/total, the ETA. */
export function progressLine(s: RerunStatus): string {
  const eta = s.etaMs === null ? '' : `, about ${formatDuration(s.etaMs)} left`;
  const cancelled = s.cancelled ? `, ${n(s.cancelled)} cancelled` : '';
  return `${s.batch}: ${n(s.done)} done, ${n(s.failed)} failed${cancelled} of ${n(s.total)} (${n(s.open)} running or queued)${eta}`;
}

/** `rerun status` of one batch. */
export function formatStatus(s: RerunStatus, failures: readonly { index: number; key: string; reason: string }[]): string {
  const sel = describeSelection(s.selection);
  const lines = [
    `batch     ${s.batch}`,
    `handler   ${s.handler}${sel ? `  (${sel})` : ''}`,
    `state     ${s.state}${s.cancelledBy !== null ? ` (cancelled${s.cancelledBy ? ` by ${s.cancelledBy}` : ''})` : ''}`,
    `progress  ${progressLine(s).replace(`${s.batch}: `, '')}`,
    `started   ${s.createdAt}${s.by ? ` by ${s.by}` : ''}`,
    ...(s.endedAt ? [`ended     ${s.endedAt}`] : []),
  ];
  if (failures.length) {
    lines.push('failed:');
    for (const f of failures) lines.push(`  ${printable(f.key)}  ${printable(f.reason)}`);
    lines.push(`(\`switchyard trace <key>\` shows a run; \`switchyard dlq list --queue handlers-low\` the dead ones)`);
  }
  return `${lines.join('\n')}\n`;
}

/** The filters of a selection as flags (`--event message.received --where data.body~refund`). */
export function describeSelection(sel: RerunSelection): string {
  const out: string[] = [];
  for (const k of ['event', 'conversation', 'contact', 'outcome'] as const) if (sel[k] !== undefined) out.push(`--${k} ${String(sel[k])}`);
  if (sel.since !== undefined) out.push(`--since ${new Date(sel.since).toISOString()}`);
  for (const c of sel.where?.conditions ?? []) out.push(`--where '${c.text}'`);
  if (sel.limit !== undefined) out.push(`--limit ${sel.limit}`);
  return printable(out.join(' '));
}

/** `rerun status` without a batch: the batches kept, newest first. */
export function formatBatches(list: readonly RerunStatus[]): string {
  if (list.length === 0) return 'no rerun batches (kept 7 days after they end)\n';
  const rows = list.map(
    (s) =>
      `${s.batch.padEnd(20)} ${s.handler.padEnd(24)} ${s.state.padEnd(10)} ${`${n(s.done)}/${n(s.failed)}/${n(s.total)}`.padEnd(16)} ${s.createdAt}` +
      (s.etaMs !== null ? `  ~${formatDuration(s.etaMs)} left` : ''),
  );
  return `${'BATCH'.padEnd(20)} ${'HANDLER'.padEnd(24)} ${'STATE'.padEnd(10)} ${'DONE/FAILED/ALL'.padEnd(16)} STARTED\n${rows.join('\n')}\n`;
}
