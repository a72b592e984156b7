import { loadConfig } from '../config/config.js';
import { devPlan, type DevSandboxPlan } from '../runtime/dev-env.js';
import { watchHandlers } from '../handler/watch-reload.js';
import { loadWorker } from '../runtime/worker.js';
import { newWorldName } from '../queue/world.js';
import { createSandbox, type RunningSandbox } from '../sandbox/index.js';
import { parseCommandArgs } from './args.js';
import { EXIT, type CliIo, type Command, type ExitCode } from './command.js';
import { lockStateDir, StateDirBusyError, type StateOwner } from '../runtime/state-lock.js';
import { resolve } from 'node:path';
import { processLogger, runService } from './run-service.js';

const HELP = `Usage: switchyard dev

Runs everything for local development in one process: the receiver and the
worker on a managed local redis-server (REDIS_URL to use another), a
development webhook secret kept in .switchyard/dev-secret (unless
WEBHOOK_SECRETS is set), and the sandbox workspace API on SANDBOX_PORT (4010),
whose signed events go to the receiver and whose API the handlers call (unless
WORKSPACE_API_URL names a real workspace). The receiver binds 127.0.0.1 unless
HOST is set. Ctrl-C stops all of it.

Saving a file under HANDLERS_DIR (./handlers) reloads the handler modules
without a restart: the queue, Redis and the sandbox's records are kept, and a
job already running finishes on the version it started with. A module that
does not load (a syntax error is shown with file:line:column and a code frame)
keeps the previous handlers running.

Example:
  switchyard dev
  PORT=3001 SANDBOX_PORT=4011 switchyard dev
`;

async function startSandbox(plan: DevSandboxPlan, secret: string, io: CliIo): Promise<RunningSandbox | undefined> {
  try {
    return await createSandbox({ token: plan.token, webhookUrl: plan.webhookUrl, secret }).listen(plan.port, '127.0.0.1');
  } catch (err) {
    io.stderr.write(`switchyard dev: cannot start the sandbox on port ${plan.port}: ${err instanceof Error ? err.message : String(err)}; ` +
      'set SANDBOX_PORT to a free port, or WORKSPACE_API_URL to use a real workspace\n');
    return undefined;
  }
}

/** `switchyard dev`: receiver, worker, managed Redis and the sandbox in one process; handler modules reload on save. */
export const devCommand: Command = {
  name: 'dev',
  summary: 'run receiver, worker and sandbox for development; reload handlers on save',
  help: HELP,
  async run(argv, io) {
    parseCommandArgs(argv, {});
    // Before anything reads or writes the state directory: a second `dev` here is refused, touching nothing.
    const state = resolve(io.cwd, io.env['SWITCHYARD_HOME'] || '.switchyard');
    let lock;
    try {
      lock = lockStateDir(state, { command: 'dev', port: io.env['PORT'] || '3000' });
    } catch (err) {
      if (!(err instanceof StateDirBusyError)) throw err;
      io.stderr.write(`switchyard dev: ${err.message}\n`);
      return EXIT.failed;
    }
    try {
      return await runDev(io, lock.previous);
    } finally {
      lock.release();
    }
  },
};

async function runDev(io: CliIo, previous: StateOwner | null): Promise<ExitCode> {
  const plan = devPlan(io.env, io.cwd);
  const config = loadConfig(plan.env, { requireSecrets: true, requireApiToken: true });
  const log = processLogger(config, io);
  if (previous) io.stdout.write(`dev: the previous switchyard ${previous.command} here (pid ${previous.pid}) ended without stopping; taking over its state\n`);
  for (const note of plan.notes) io.stdout.write(`dev: ${note}\n`);
  // Handler modules first: a broken one stops start-up before anything listens.
  // A fresh sandbox is a new world: record ids start over, so changes claimed against the last one are not its own.
  const worker = await loadWorker(config, log, plan.env, plan.sandbox ? { freshWorld: newWorldName('sandbox') } : {});
  const sandbox = plan.sandbox ? await startSandbox(plan.sandbox, config.webhookSecrets[0] ?? '', io) : undefined;
  if (plan.sandbox && !sandbox) return EXIT.failed;
  const watcher = watchHandlers({
    dir: config.handlersDir, only: config.handlers, env: plan.env, set: worker.set,
    say: (line) => io.stdout.write(`dev: ${line}\n`),
    warn: (text) => io.stderr.write(`dev: ${text}\n`),
  });
  io.stdout.write(`dev: watching ${config.handlersDir} for changes\n`);
  try {
    return await runService(io, { command: 'dev', receiver: true, worker: worker.start }, config, log);
  } finally {
    watcher.close();
    await sandbox?.close();
  }
}
