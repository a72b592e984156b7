import { relative } from 'node:path';
import type { Handler } from '../handler.js';
import { HandlerSettingsError } from '../handler/errors.js';
import { describeRetry, formatDuration } from '../handler/options.js';
import { describeFlow, type FlowPolicy, type KeyOption } from '../handler/flow.js';
import { parseSettings, settingVariables, type SettingVariable } from '../handler/settings.js';
import { dropSecrets, handlerEnv } from '../worker/handler-env.js';
import { loadHandlerDir } from '../worker/loader.js';
import { parseCommandArgs } from './args.js';
import { EXIT, type Command } from './command.js';
import { cliConfig } from './connect.js';

const HELP = `Usage: switchyard handlers [--json]

Loads the handler modules of HANDLERS_DIR (default ./handlers), as the worker
would, and lists each handler with its events, token abilities, settings (the
environment variables it reads: required, or their default), retries,
timeout and flow settings (priority, orderBy, skipStale, maxAge, debounce), then the helper modules beside them (modules that export no handler).
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

function settingsProblems(handler: Handler, env: Readonly<Record<string, string | undefined>>): string[] {
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
  summary: 'list the loaded handlers with their events, abilities, settings and retries',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } });
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    const config = cliConfig(io);
    dropSecrets(process.env); // handler modules run their top-level code in this process
    const { handlers, helpers } = await loadHandlerDir(config.handlersDir, config.handlers);
    const env = handlerEnv(io.env);
    const rows: Row[] = handlers.map(({ handler: h, file }) => ({
      id: h.id, on: [...h.on], abilities: [...h.abilities],
      settings: h.settings ? settingVariables(h.settings) : [], settingsProblems: settingsProblems(h, env),
      retry: h.retry, timeoutMs: h.timeoutMs, flow: flowRow(h.flow), file,
    }));
    const flows = new Map(handlers.map(({ handler: h }) => [h.id, h.flow]));
    const failed = rows.some((r) => r.settingsProblems.length > 0);
    if (values.json) {
      io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return failed ? EXIT.failed : EXIT.ok;
    }
    if (rows.length === 0) io.stdout.write(`no handler modules in ${config.handlersDir}\n`);
    const list = (items: string[]) => items.join('\n             ');
    for (const r of rows) {
      io.stdout.write(
        `${r.id}\n  on:        ${r.on.join(', ')}\n  abilities: ${r.abilities.join(', ') || '(none declared)'}\n` +
        `  settings:  ${r.settings.length ? list(r.settings.map(describeSetting)) : '(none)'}\n` +
        (r.settingsProblems.length ? `  invalid:   ${list(r.settingsProblems)}\n` : '') +
        `  retry:     ${describeRetry(r.retry)}\n  timeout:   ${r.timeoutMs === null ? '(none)' : formatDuration(r.timeoutMs)}\n` +
        `  flow:      ${describeFlow(flows.get(r.id) as FlowPolicy)}\n` +
        `  file:      ${r.file}\n`,
      );
    }
    if (helpers.length > 0) {
      io.stdout.write(`helper modules (no handler exported): ${helpers.map((f) => relative(io.cwd, f) || f).join(', ')}\n`);
    }
    if (failed) {
      io.stderr.write(`switchyard handlers: settings missing or invalid in this environment; the worker would not start: ${rows.filter((r) => r.settingsProblems.length).map((r) => r.id).join(', ')}\n`);
    }
    return failed ? EXIT.failed : EXIT.ok;
  },
};
