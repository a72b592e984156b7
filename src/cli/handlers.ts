import { relative } from 'node:path';
import { secretVariables } from '../config/index.js';
import {
  type Handler,
  HandlerSettingsError,
  describeRetry,
  formatDuration,
  describeRunPolicy,
  type FlowPolicy,
  type KeyOption,
  parseSettings,
  settingVariables,
  type SettingVariable,
  dropSecrets,
  handlerEnv,
  loadHandlerDir,
  describeSchedule,
  type Schedule,
} from '../handler/index.js';
import { isDerivedEvent } from '../events/index.js';
import { nextRun } from '../sources/index.js';
import { parseCommandArgs } from './args.js';
import { EXIT, type Command } from './command.js';
import { cliConfig } from './connect.js';
import { describeWorkflow, workflowRow, type WorkflowRow } from './handler-workflow.js';

const HELP = `Usage: switchyard handlers [--json]

Loads the handler modules of HANDLERS_DIR (default ./handlers), as the worker
would, and lists each handler with its events, token abilities, settings (the
environment variables it reads: required, or their default), retries,
timeout, flow settings (priority, orderBy, skipStale, maxAge, debounce) and
workflow (cancelOn, waitsFor, ctx.state, and the ctx.step/sleep/sleepUntil/
waitForEvent calls written in its module); events
marked "(polled)" are derived by the worker's poller every POLL_EVERY, not
received as webhooks. Then the schedules (every or cron, time zone, next run,
abilities, settings, retries, timeout, priority) and the helper modules
beside them (modules that export no handler).
Modules may be .ts, .mts, .cts, .js, .mjs or .cjs, in a "module" or
"commonjs" project. A module that cannot be loaded, a missing directory, or a
setting missing or invalid in this environment is reported with the file or
the variable and what is expected (exit 1).

Example:
  HANDLERS_DIR=./handlers switchyard handlers
`;

interface Row {
  id: string;
  on: string[];
  abilities: string[];
  settings: SettingVariable[];
  /** What is wrong with the settings in this environment (empty when they parse). */
  settingsProblems: string[];
  retry: Handler['retry'];
  timeoutMs: number | null;
  /** Priority, order, staleness and debounce (JSON: `orderBy`/`debounce.key` as 'conversation', 'contact' or 'function'). */
  flow: FlowRow;
  /** cancelOn, waitsFor, ctx.state and the workflow calls of its module. */
  workflow: WorkflowRow;
  file: string;
}

interface FlowRow {
  priority: string;
  orderBy: string | null;
  onDead: string | null;
  skipStale: boolean;
  maxAgeMs: number | null;
  debounce: { key: string; waitMs: number; maxWaitMs: number } | null;
}

const keyName = (k: KeyOption) => (typeof k === 'function' ? 'function' : k);

function flowRow(p: FlowPolicy): FlowRow {
  return {
    priority: p.priority,
    orderBy: p.orderBy ? keyName(p.orderBy) : null,
    onDead: p.orderBy ? p.onDead : null,
    skipStale: p.skipStale,
    maxAgeMs: p.maxAgeMs,
    debounce: p.debounce ? { key: keyName(p.debounce.key), waitMs: p.debounce.waitMs, maxWaitMs: p.debounce.maxWaitMs } : null,
  };
}

interface ScheduleRow {
  id: string;
  /** `every 15m` or `cron 0 9 * * 1-5 (Europe/Paris)`. */
  runs: string;
  everyMs: number | null;
  cron: string | null;
  timezone: string | null;
  /** ISO time of the next run after now. */
  nextRun: string | null;
  abilities: string[];
  settings: SettingVariable[];
  settingsProblems: string[];
  retry: Schedule['retry'];
  timeoutMs: number | null;
  priority: string;
  file: string;
}

function scheduleRow(s: Schedule, file: string, now: number, env: Readonly<Record<string, string | undefined>>): ScheduleRow {
  const next = nextRun(s, now);
  return {
    id: s.id,
    runs: describeSchedule(s),
    everyMs: s.everyMs,
    cron: s.cron,
    timezone: s.timezone,
    nextRun: next === null ? null : new Date(next).toISOString(),
    abilities: [...s.abilities],
    settings: s.settings ? settingVariables(s.settings) : [],
    settingsProblems: settingsProblems(s, env),
    retry: s.retry,
    timeoutMs: s.timeoutMs,
    priority: s.priority,
    file,
  };
}

function settingsProblems(handler: Pick<Handler, 'id' | 'settings'>, env: Readonly<Record<string, string | undefined>>): string[] {
  if (!handler.settings) return [];
  try {
    parseSettings(handler.id, handler.settings, env);
    return [];
  } catch (err) {
    if (err instanceof HandlerSettingsError) return err.problems.map((p) => p.problem);
    throw err;
  }
}

/** `FOLLOW_UP_DAYS (default 2): days from the close …` */
function describeSetting(s: SettingVariable): string {
  const shown = typeof s.default === 'object' && s.default !== null ? 'set' : JSON.stringify(s.default);
  const state = s.required ? 'required' : s.default === undefined ? 'optional' : `default ${shown}`;
  return `${s.name} (${state})${s.description ? `: ${s.description}` : ''}`;
}

export const handlersCommand: Command = {
  name: 'handlers',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } });
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    const config = cliConfig(io);
    dropSecrets(process.env, secretVariables(config)); // handler modules run their top-level code in this process
    const { handlers, helpers, schedules } = await loadHandlerDir(config.handlersDir, config.handlers);
    const env = handlerEnv(io.env);
    const rows: Row[] = handlers.map(({ handler: h, file }) => ({
      id: h.id,
      on: [...h.on],
      abilities: [...h.abilities],
      settings: h.settings ? settingVariables(h.settings) : [],
      settingsProblems: settingsProblems(h, env),
      retry: h.retry,
      timeoutMs: h.timeoutMs,
      flow: flowRow(h.flow),
      workflow: workflowRow(h, file),
      file,
    }));
    const flows = new Map(handlers.map(({ handler: h }) => [h.id, h.flow]));
    const now = Date.now();
    const scheduleRows = schedules.map(({ schedule: s, file }) => scheduleRow(s, file, now, env));
    const failed = [...rows, ...scheduleRows].some((r) => r.settingsProblems.length > 0);
    if (values.json) {
      // Handlers as before (an array), plus schedules when there are any.
      const out = scheduleRows.length ? { handlers: rows, schedules: scheduleRows } : rows;
      io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      return failed ? EXIT.failed : EXIT.ok;
    }
    if (rows.length === 0 && scheduleRows.length === 0) io.stdout.write(`no handler modules in ${config.handlersDir}\n`);
    const list = (items: string[]) => items.join('\n             ');
    for (const r of rows) {
      io.stdout.write(
        `${r.id}\n  on:        ${r.on.map((n) => (isDerivedEvent(n) ? `${n} (polled)` : n)).join(', ')}\n` +
          `  abilities: ${r.abilities.join(', ') || '(none declared)'}\n` +
          `  settings:  ${r.settings.length ? list(r.settings.map(describeSetting)) : '(none)'}\n` +
          (r.settingsProblems.length ? `  invalid:   ${list(r.settingsProblems)}\n` : '') +
          `  retry:     ${describeRetry(r.retry)}\n  timeout:   ${r.timeoutMs === null ? '(none)' : formatDuration(r.timeoutMs)}\n` +
          `  flow:      ${describeRunPolicy(flows.get(r.id) as FlowPolicy)}\n` +
          `  workflow:  ${describeWorkflow(r.workflow).length ? list(describeWorkflow(r.workflow)) : '(none)'}\n` +
          `  file:      ${r.file}\n`,
      );
    }
    for (const s of scheduleRows) {
      io.stdout.write(
        `${s.id} (schedule)\n  runs:      ${s.runs}\n  next run:  ${s.nextRun ?? '(never)'}\n` +
          `  abilities: ${s.abilities.join(', ') || '(none declared)'}\n` +
          `  settings:  ${s.settings.length ? list(s.settings.map(describeSetting)) : '(none)'}\n` +
          (s.settingsProblems.length ? `  invalid:   ${list(s.settingsProblems)}\n` : '') +
          `  retry:     ${describeRetry(s.retry)}\n  timeout:   ${s.timeoutMs === null ? '(none)' : formatDuration(s.timeoutMs)}\n` +
          `  priority:  ${s.priority}\n  file:      ${s.file}\n`,
      );
    }
    if (rows.some((r) => r.on.some(isDerivedEvent))) {
      io.stdout.write("(polled): derived by the worker's poller from the API's listings every POLL_EVERY, not pushed as webhooks\n");
    }
    if (helpers.length > 0) {
      io.stdout.write(`helper modules (no handler exported): ${helpers.map((f) => relative(io.cwd, f) || f).join(', ')}\n`);
    }
    if (failed) {
      const bad = [
        ...rows.filter((r) => r.settingsProblems.length).map((r) => r.id),
        ...scheduleRows.filter((r) => r.settingsProblems.length).map((r) => `${r.id} (schedule)`),
      ];
      io.stderr.write(
        `switchyard handlers: settings missing or invalid in this environment; the worker would not start: ${bad.join(', ')}\n`,
      );
    }
    return failed ? EXIT.failed : EXIT.ok;
  },
};
