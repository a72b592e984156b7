import { readFileSync } from 'node:fs';
import type { Handler } from '../handler/index.js';
import { formatDuration } from '../util/index.js';

/**
 * A handler's workflow as `switchyard handlers` shows it (JSON: match keys as 'conversation', 'contact', 'function', or
 * 'conversation where (function)' for a keyed where).
 */
export interface WorkflowRow {
  cancelOn: { event: string; match: string }[];
  waitsFor: string[];
  state: { key: string; ttlMs: number } | null;
  /** The workflow calls written in the handler's module (`ctx.step`, `ctx.sleep`, …), as found in its source text. */
  uses: string[];
}

const CALLS = ['step', 'sleep', 'sleepUntil', 'waitForEvent'] as const;

const keyName = (k: unknown): string => {
  if (typeof k === 'function') return 'function';
  if (typeof k === 'object' && k !== null) return `${String((k as { on?: unknown }).on)} where (function)`;
  return String(k);
};

/** The workflow calls a module's text makes: `.step(`, `.sleep(`, `.sleepUntil(`, `.waitForEvent(`, and `.state.` (ctx.state). */
export function workflowCalls(source: string): string[] {
  const found: string[] = CALLS.filter((c) => new RegExp(`\\.${c}\\s*(<[^>]*>\\s*)?\\(`).test(source)).map((c) => `ctx.${c}`);
  if (/\.state\s*\.\s*(get|set|update|delete)\s*[(<]/.test(source)) found.push('ctx.state');
  return found;
}

export function workflowRow(h: Pick<Handler, 'workflow'>, file: string): WorkflowRow {
  let source = '';
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    /* loaded a moment ago; unreadable now: no calls shown */
  }
  const w = h.workflow;
  return {
    cancelOn: w.cancelOn.map((c) => ({ event: c.event, match: keyName(c.match) })),
    waitsFor: [...w.waitsFor],
    state: w.state ? { key: keyName(w.state.key), ttlMs: w.state.ttlMs } : null,
    uses: workflowCalls(source),
  };
}

/** The lines under `workflow:`; empty when the handler uses none of it. */
export function describeWorkflow(w: WorkflowRow): string[] {
  const lines: string[] = [];
  if (w.uses.length) lines.push(`uses ${w.uses.join(', ')} (in its module)`);
  for (const c of w.cancelOn) lines.push(`cancelOn ${c.event} (match ${c.match})`);
  if (w.waitsFor.length) lines.push(`waitsFor ${w.waitsFor.join(', ')}`);
  if (w.state) lines.push(`ctx.state by ${w.state.key}, kept ${formatDuration(w.state.ttlMs)} after its last write`);
  return lines;
}
