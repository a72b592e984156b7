import { loadConfig } from '../config/index.js';
import { devPlan, type DevSandboxPlan, loadWorker, lockStateDir, StateDirBusyError, type StateOwner } from '../runtime/index.js';
import { watchHandlers } from '../handler/index.js';
import { newWorldName } from '../queue/index.js';
import { createSandbox, type RunningSandbox, type Sandbox } from '../sandbox/index.js';
import { defaultWorkspaceKey, KeptStateError } from '../sandbox/internal.js';
import { parseCommandArgs, str } from './args.js';
import {
  devWorkspacesConfig,
  missingWorkspaces,
  sandboxWorkspaces,
  workspaceLines,
  workspacesFlag,
  writeWorkspacesFile,
  removeWorkspacesFile,
} from './dev-workspaces.js';
import { EXIT, type CliIo, type Command, type ExitCode } from './command.js';
import { join, resolve } from 'node:path';
import { processLogger, runService } from './run-service.js';

const HELP = `Usage: switchyard dev [--keep-sandbox] [--workspaces N]

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

A restarted dev starts a fresh sandbox (record ids start over). With
--keep-sandbox it keeps the sandbox instead: its records, ids, clock, events
and queued deliveries are saved in .switchyard/sandbox-state.json shortly
after each change (within about a second: a SIGKILL loses at most that) and
on exit, and the next dev --keep-sandbox starts from them. Delete the file for
a fresh one.

With --workspaces N it serves N sandbox workspaces as one deployment of many
(ids acme, other, then ws3, ws4, …): each has its own webhook URL
(<receiver>/webhooks/<id>), signing secret (kept in .switchyard/dev-secret-<id>;
acme signs with WEBHOOK_SECRETS) and sandbox token, its own queues and API
budget, and the workers are shared fairly between them. The first lines say
which workspaces there are and how to write in each; commands in other
terminals find them (.switchyard/dev-workspaces.json) and take --workspace <id>.

Options:
  --keep-sandbox  keep the sandbox's state across restarts (default: fresh)
  --workspaces N  serve N sandbox workspaces (1 to 100; default: one workspace, as a deployment of one)

Example:
  switchyard dev
  PORT=3001 SANDBOX_PORT=4011 switchyard dev
  switchyard dev --keep-sandbox
  switchyard dev --workspaces 2
`;

/** Where `--keep-sandbox` keeps the sandbox, under the state directory. */
export const KEPT_SANDBOX_FILE = 'sandbox-state.json';

/** The sandbox, kept in `stateFile` when given; a kept file that cannot be read is said and refused. */
function makeSandbox(plan: DevSandboxPlan, secret: string, io: CliIo, stateFile: string | undefined): Sandbox | undefined {
  const webhooks = plan.workspaces
    ? { workspaces: sandboxWorkspaces(plan.workspaces, secret) }
    : { token: plan.token, webhookUrl: plan.webhookUrl, secret };
  try {
    return createSandbox({ ...webhooks, ...(stateFile ? { stateFile } : {}) });
  } catch (err) {
    if (!(err instanceof KeptStateError)) throw err;
    io.stderr.write(`switchyard dev: ${err.message}, or run without --keep-sandbox\n`);
    return undefined;
  }
}

async function startSandbox(sandbox: Sandbox, plan: DevSandboxPlan, io: CliIo): Promise<RunningSandbox | undefined> {
  try {
    return await sandbox.listen(plan.port, '127.0.0.1');
  } catch (err) {
    io.stderr.write(
      `switchyard dev: cannot start the sandbox on port ${plan.port}: ${err instanceof Error ? err.message : String(err)}; ` +
        'set SANDBOX_PORT to a free port, or WORKSPACE_API_URL to use a real workspace\n',
    );
    return undefined;
  }
}

/** The start-up line of a kept sandbox: where it is kept and whether it was taken up again. */
function keptNote(sandbox: Sandbox, file: string): string {
  const records = [...sandbox.state.workspaces.values()].reduce(
    (n, ws) => n + ws.contacts.size + ws.conversations.size + ws.deals.size + ws.orders.size,
    0,
  );
  return sandbox.restored
    ? `sandbox kept in ${file}: taken up again ` +
        `(${records} contacts, conversations, deals and orders; ${sandbox.emitter.events().length} events)`
    : `sandbox kept in ${file} (new; saved after each change and on exit)`;
}

/**
 * The world the sandbox's changes are claimed in. A fresh sandbox is a new
 * world: record ids start over, so changes claimed against the last one are
 * not its own. A kept sandbox stays the world it was (named by its lifetime
 * id), so claims made before the restart stay valid.
 */
function worldOf(sandbox: Sandbox, kept: boolean): string {
  return kept ? `sandbox-${sandbox.state.generation}` : newWorldName('sandbox');
}

/** `switchyard dev`: receiver, worker, managed Redis and the sandbox in one process; handler modules reload on save. */
export const devCommand: Command = {
  name: 'dev',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { 'keep-sandbox': { type: 'boolean' }, workspaces: { type: 'string' } });
    const workspaces = workspacesFlag(str(values, 'workspaces'));
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
      const kept = values['keep-sandbox'] === true ? join(state, KEPT_SANDBOX_FILE) : undefined;
      return await runDev(io, lock.previous, kept, workspaces);
    } finally {
      lock.release();
    }
  },
};

async function runDev(io: CliIo, previous: StateOwner | null, keptFile: string | undefined, workspaces?: number): Promise<ExitCode> {
  const ids = workspaces === undefined ? undefined : Array.from({ length: workspaces }, (_, i) => defaultWorkspaceKey(i));
  const plan = devPlan(io.env, io.cwd, ids ? { workspaces: ids } : {});
  const loaded = loadConfig(plan.env, { requireSecrets: true, requireApiToken: true });
  const served = plan.sandbox?.workspaces;
  const config = served ? devWorkspacesConfig(loaded, served) : loaded;
  const log = processLogger(config, io);
  if (previous)
    io.stdout.write(
      `dev: the previous switchyard ${previous.command} here (pid ${previous.pid}) ended without stopping; taking over its state\n`,
    );
  // The sandbox is made (a kept file read) before the plan's lines name its URLs: a refused file says so alone.
  const made = plan.sandbox ? makeSandbox(plan.sandbox, config.webhookSecrets[0] ?? '', io, keptFile) : undefined;
  if (plan.sandbox && !made) return EXIT.failed;
  const absent = made && served ? missingWorkspaces(made, served) : [];
  if (absent.length) {
    io.stderr.write(
      `switchyard dev: the kept sandbox ${keptFile} has no workspace ${absent.join(', ')} (it was kept with fewer workspaces); ` +
        'run with the --workspaces it was kept with, or delete the file for a fresh sandbox\n',
    );
    return EXIT.failed;
  }
  for (const note of plan.notes) io.stdout.write(`dev: ${note}\n`);
  if (made && plan.sandbox && served)
    for (const line of workspaceLines(made, plan.sandbox, served, config.stateDir)) io.stdout.write(`dev: ${line}\n`);
  if (keptFile)
    io.stdout.write(
      `dev: ${made ? keptNote(made, keptFile) : '--keep-sandbox has nothing to keep: WORKSPACE_API_URL names a real workspace'}\n`,
    );
  // Handler modules first: a broken one stops start-up before anything listens.
  const world = made ? worldOf(made, keptFile !== undefined) : undefined;
  const worker = await loadWorker(config, log, plan.env, world ? { freshWorld: world } : {});
  const sandbox = made && plan.sandbox ? await startSandbox(made, plan.sandbox, io) : undefined;
  if (plan.sandbox && !sandbox) return EXIT.failed;
  const watcher = watchHandlers({
    dir: config.handlersDir,
    only: config.handlers,
    env: plan.env,
    set: worker.set,
    say: (line) => io.stdout.write(`dev: ${line}\n`),
    warn: (text) => io.stderr.write(`dev: ${text}\n`),
  });
  io.stdout.write(`dev: watching ${config.handlersDir} for changes\n`);
  // Without --workspaces, a file a crashed `dev --workspaces` left behind goes: other terminals would read it.
  const shared = served ? writeWorkspacesFile(config, io.cwd) : removeWorkspacesFile(config, io.cwd);
  try {
    return await runService(io, { command: 'dev', receiver: true, worker: worker.start }, config, log);
  } finally {
    shared?.remove();
    watcher.close();
    await sandbox?.close();
  }
}
