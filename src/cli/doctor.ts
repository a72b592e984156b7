import { configuredApiClients } from '../clients/index.js';
import { printableLines } from '../util/index.js';
import { ConfigError, loadConfig } from '../config/index.js';
import { checkApi, checkParkedRuns, checkRedis, checkSettings, type Check } from './doctor-checks.js';
import { type Handler, type Schedule, dropSecrets, handlerEnv, loadHandlerDir, selectHandlers } from '../handler/index.js';
import { parseCommandArgs } from './args.js';
import { EXIT, type Command } from './command.js';
import { cliRedisUrl } from './connect.js';

const MARK = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;

export const doctorCommand: Command = {
  name: 'doctor',
  help: `Usage: switchyard doctor [--json]

Checks the configuration, the settings of the loaded handlers and schedules
(parsed from the environment as the worker will), Redis (version, eviction
policy, persistence), runs parked for a handler no module defines any more
(with the command that cancels them), the API token (GET /me) and whether its
abilities cover what the loaded handlers and schedules declare, and prints
what to fix. Exits 1 when any check fails.

Example:
  REDIS_URL=redis://127.0.0.1:6379 WORKSPACE_API_URL=http://127.0.0.1:4010/api/v1 \\
  WORKSPACE_API_TOKEN=sbx_full_acme switchyard doctor
`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } });
    const checks: Check[] = [];
    let config;
    try {
      config = loadConfig(io.env, { requireSecrets: false });
      checks.push({ name: 'configuration', status: 'ok', detail: 'environment is valid' });
      if (config.webhookSecrets.length === 0) {
        checks.push({
          name: 'webhook secrets',
          status: 'warn',
          detail: 'WEBHOOK_SECRETS is unset: `serve` and `start` will refuse to run',
          fix: 'set WEBHOOK_SECRETS to the signing secret of the webhook settings',
        });
      }
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      for (const p of err.problems) checks.push({ name: p.variable, status: 'fail', detail: p.problem });
    }
    if (config) {
      let handlers: Handler[] = [];
      let schedules: Schedule[] = [];
      // Every handler the directory defines (HANDLERS narrows what one process runs, not what exists).
      let defined: string[] | undefined;
      try {
        dropSecrets(process.env); // handler modules run their top-level code in this process
        const dir = await loadHandlerDir(config.handlersDir);
        defined = dir.handlers.map((l) => l.handler.id);
        handlers = (config.handlers ? selectHandlers(dir.handlers, config.handlers, config.handlersDir) : dir.handlers).map(
          (l) => l.handler,
        );
        schedules = dir.schedules.map((l) => l.schedule);
        checks.push({
          name: 'handlers',
          status: 'ok',
          detail:
            `${handlers.length} loaded from ${config.handlersDir}: ${handlers.map((h) => h.id).join(', ') || 'none'}` +
            (schedules.length
              ? `; ${schedules.length} schedule${schedules.length === 1 ? '' : 's'}: ${schedules.map((s) => s.id).join(', ')}`
              : ''),
        });
        // Schedules too: every worker runs them (HANDLERS does not narrow them), and a bad setting stops its start.
        checks.push(...checkSettings(handlers, handlerEnv(io.env), schedules));
      } catch (err) {
        checks.push({ name: 'handlers', status: 'fail', detail: (err as Error).message });
      }
      checks.push(...(await checkRedis(config)));
      if (defined) checks.push(...(await checkParkedRuns(config, defined, cliRedisUrl(config, io.cwd))));
      // A URL the client refuses (plain http to another host) is a failed check of the list, not an abort.
      let api;
      let refused: string | undefined;
      try {
        // A bare client (no shared limiter): one call, never retried.
        api = configuredApiClients(config, undefined, { retry: { maxAttempts: 1 } })?.();
      } catch (err) {
        refused = err instanceof Error ? err.message.replace(/^createApiClient: baseUrl/, 'WORKSPACE_API_URL') : String(err);
      }
      if (refused)
        checks.push({
          name: 'api',
          status: 'fail',
          detail: refused,
          fix: 'use the https URL of the workspace API (plain http only for a local sandbox on 127.0.0.1/localhost)',
        });
      else checks.push(...(await checkApi(config, handlers, api, schedules)));
    }
    if (values['json']) io.stdout.write(JSON.stringify({ checks }, null, 2) + '\n');
    else {
      for (const c of checks) {
        // A multi-line detail (a code frame) stays indented under its check.
        io.stdout.write(`${MARK[c.status]}  ${c.name}: ${printableLines(c.detail).join('\n      ')}\n`);
        if (c.fix) io.stdout.write(`      fix: ${printableLines(c.fix).join('\n      ')}\n`);
      }
    }
    return checks.some((c) => c.status === 'fail') ? EXIT.failed : EXIT.ok;
  },
};
