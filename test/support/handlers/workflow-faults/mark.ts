/**
 * Where the workflow fault fixtures record what ran: one JSON line per point
 * reached, appended synchronously to the file named by WFF_LOG (so a line
 * written before a SIGKILL is there after it), with the writing process's pid.
 * `step` and `woke` are marked inside ctx.step (exactly once per run by
 * contract); `pre` and `done` are plain code (once per attempt that reaches them).
 * Without WFF_LOG (in-process tests), `globalThis.__syWff` collects them.
 */
import { appendFileSync } from 'node:fs';

type Entry = Record<string, unknown> & { h: string; at: string };
const g = globalThis as { __syWff?: Entry[] };

export function mark(entry: Entry): void {
  const line = { ...entry, t: Date.now(), pid: process.pid };
  const file = process.env['WFF_LOG'];
  if (file) appendFileSync(file, `${JSON.stringify(line)}\n`);
  else (g.__syWff ??= []).push(line);
}

/** The sandbox conversation the fixtures write their notes to (the run's own conversation is only a match key). */
export function noteConv(fallback: number): number {
  const v = Number(process.env['WFF_NOTE_CONV']);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}
