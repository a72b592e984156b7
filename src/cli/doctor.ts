import { printableLines } from '../util/index.js';
import { ConfigError, loadConfig, secretVariables } from '../config/index.js';
import { checkRedis, checkSettings, type Check } from './doctor-checks.js';
import { doctorWorkspaces, workspaceChecks } from './doctor-workspaces.js';
import { type Handler, type Schedule, dropSecrets, handlerEnv, loadHandlerDir, selectHandlers } from '../handler/index.js';
import { parseCommandArgs, str } from './args.js';
import { EXIT, type Command } from './command.js';
import { cliRedisUrl } from './connect.js';
import { WORKSPACE_OPTION } from './flags.js';

const MARK = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;

export const doctorCommand: Command = {
  name: 'doctor',
  help: `Usage: switchyard doctor [--workspace ID] [--json]

Checks the configuration, the settings of the loaded handlers and schedules
(parsed from the environment as the worker will), Redis (version, eviction
policy, persistence), runs parked for a handler no module defines any more
(with the command that cancels them), the API token (GET /me) and whether its
abilities cover what the loaded handlers and schedules declare, and prints
what to fix. Exits 1 when any check fails.

With WORKSPACES_FILE, the token, its abilities and the parked runs are checked
for every workspace of the file, one section each ("workspace acme:"; in
--json each of its checks has "workspace"); --workspace ID checks that one.
No token or secret is printed.

Example:
  REDIS_URL=redis://127.0.0.1:6379 WORKSPACE_API_URL=http://127.0.0.1:4010/api/v1 \\
  WORKSPACE_API_TOKEN=sbx_full_acme switchyard doctor
`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { json: { type: 'boolean' }, ...WORKSPACE_OPTION });
    const checks: Check[] = [];
    let config;
    try {
      config = loadConfig(io.env, { requireSecrets: false });
      checks.push({ name: 'configuration', status: 'ok', detail: 'environment is valid' });
      if (config.workspaces) {
        const ids = config.workspaces.map((w) => w.id).join(', ');
        checks.push({ name: 'workspaces', status: 'ok', detail: `${config.workspaces.length} in ${config.workspacesFile}: ${ids}` });
      } else if (config.webhookSecrets.length === 0) {
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
      // The workspaces to check, chosen first: a --workspace the file does not name stops here (exit 2).
      const workspaces = doctorWorkspaces(config, str(values, 'workspace'));
      let handlers: Handler[] = [];
      let schedules: Schedule[] = [];
      // Every handler the directory defines (HANDLERS narrows what one process runs, not what exists).
      let defined: string[] | undefined;
      try {
        dropSecrets(process.env, secretVariables(config)); // handler modules run their top-level code in this process
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
      for (const ws of workspaces) {
        checks.push(...(await workspaceChecks(ws, { handlers, schedules, defined, redisUrl: cliRedisUrl(config, io.cwd) })));
      }
    }
    if (values['json']) io.stdout.write(JSON.stringify({ checks }, null, 2) + '\n');
    else {
      let section: string | undefined;
      for (const c of checks) {
        if (c.workspace !== section) io.stdout.write(`workspace ${(section = c.workspace)}:\n`);
        // A multi-line detail (a code frame) stays indented under its check.
        io.stdout.write(`${MARK[c.status]}  ${c.name}: ${printableLines(c.detail).join('\n      ')}\n`);
        if (c.fix) io.stdout.write(`      fix: ${printableLines(c.fix).join('\n      ')}\n`);
      }
    }
    return checks.some((c) => c.status === 'fail') ? EXIT.failed : EXIT.ok;
  },
};
