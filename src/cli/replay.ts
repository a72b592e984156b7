import { relative } from 'node:path';
import { secretVariables, type Config } from '../config/index.js';
import { type Handler, dropSecrets, loadHandlers } from '../handler/index.js';
import { createLogger } from '../log/index.js';
import {
  filterItems,
  inlineTarget,
  InputError,
  lineReporter,
  printableBody,
  progressReporter,
  readInputs,
  replayFailed,
  runReplay,
  type DryWriteReport,
  type ReplayItem,
  type ReplayTarget,
} from '../replay/index.js';
import { EXIT, UsageError, type CliIo, type Command, type ExitCode } from './command.js';
import { cliConfig, deliveryTarget } from './connect.js';
import { workspaceHelp } from './flags.js';
import { parseReplay, type ReplayFlags } from './replay-flags.js';

const HELP = `Usage: switchyard replay <file|dir|file.ndjson>... [options]

Replays captured deliveries (fixtures as in fixtures/, or plain event JSON)
with their exact bytes, signed afresh. Directories are read recursively
(*.json, *.ndjson), leaving out subdirectories whose name starts with _ or .
(fixtures/_malformed/: name it to replay it); an .ndjson file holds one
fixture or event per line.

Where to:
  (default)          POST to --to, signed with --secret
  --to URL           receiver URL (default: the running \`dev\`/\`start\` of this project,
                     else http://127.0.0.1:$PORT$WEBHOOK_PATH; with --workspace, .../<id>)
  --secret S         signing secret (default: the first of WEBHOOK_SECRETS, or of the
                     workspace's secrets, else the development secret of a running \`npm run dev\`)
${workspaceHelp(21)}                     (its receiver path and secret; --direct: its Redis keys; --inline: its API and token)
  --direct           no HTTP: into Redis (REDIS_URL) with the receiver's dedupe;
                     a running switchyard process picks it up
  --inline           no Redis: validate and run the subscribed handlers here
                     against WORKSPACE_API_URL with WORKSPACE_API_TOKEN, printing
                     each handler's outcome and API calls. Each run sends its
                     own Idempotency-Keys, so replaying after editing a handler
                     writes again instead of being refused as a reused key.
                     Workflows run to their end without waiting, each sleep,
                     wait and state access printed: a sleep passes at once (with the time it would
                     have been due); a wait is answered by the first matching
                     event of the files given (received after the run's own,
                     before the timeout; filters do not hide events from it),
                     else it times out and returns null; a cancelOn event among
                     them cancels the run (not a failure); ctx.state is kept in
                     memory for this replay (reads and writes printed, secrets,
                     emails and phone numbers masked). An event's time is its
                     fixture's received_at, else its created_at
  --reuse-keys       --inline: send the keys the worker would send (the same on
                     every run: the API replays the first answer for 24 hours,
                     and refuses a key with a different body)
  --dry-run          --inline: reads go to the API, writes are not sent. Each
                     write is printed as the call it would be (method, path,
                     Idempotency-Key, body), marked dry, and answered with a
                     success built from the request in the API's record shape

Which:
  --event NAME       only these events (repeat or comma-separate)
  --handler ID       only events this handler subscribes to (--inline: run only it)
  --since WHEN       received (or created) at or after WHEN: 2h, 30m, 7d or a date
  --limit N          at most N deliveries

How:
  --new-ids          give each delivery a fresh envelope id so dedupe lets it
                     through (the body is re-serialised: its bytes change)
  --concurrency N    deliveries in flight (default 8)
  --json             print a machine-readable summary only
  --verbose          a line per delivery even on a terminal

Exit status: 0 all accepted or duplicate, 1 anything rejected or failed, 2 bad usage.

Examples:
  switchyard replay fixtures/ --new-ids
  switchyard replay captures/ --inline --handler follow-up-task
  switchyard replay fixtures/ --inline --dry-run
  switchyard replay captures/ --inline --handler first-reply-sla   (its waits see every event in captures/)
  switchyard replay events.ndjson --direct --event conversation.closed --since 2h
`;

async function handlersFor(config: Config, id: string | undefined): Promise<Handler[]> {
  const loaded = (await loadHandlers(config.handlersDir, config.handlers)).map((l) => l.handler);
  if (id === undefined) return loaded;
  const h = loaded.find((x) => x.id === id);
  if (!h) {
    const known = loaded.length ? ` (loaded: ${loaded.map((x) => x.id).join(', ')})` : '';
    throw new UsageError(`--handler: no handler "${id}" in ${config.handlersDir}${known}`);
  }
  return [h];
}

/** Every item of the paths given (a bad file is a usage error); skipped directories are said on stderr. */
async function readItems(f: ReplayFlags, io: CliIo): Promise<ReplayItem[]> {
  try {
    return await readInputs(f.paths, io.cwd, (dir) => {
      io.stderr.write(
        `replay: not descending into ${relative(io.cwd, dir) || dir}/ (directories starting with _ or . are read only when named)\n`,
      );
    });
  } catch (err) {
    if (err instanceof InputError) throw new UsageError(err.message);
    throw err;
  }
}

/** The items chosen by --event, --handler (the events it subscribes to), --since and --limit. */
function chooseItems(f: ReplayFlags, input: readonly ReplayItem[], handlers: readonly Handler[]): ReplayItem[] {
  return filterItems(input, {
    events: f.events,
    ...(f.handlerId !== undefined ? { subscribed: handlers.flatMap((h) => [...h.on]) } : {}),
    ...(f.sinceMs !== undefined ? { sinceMs: f.sinceMs } : {}),
    ...(f.limit !== undefined ? { limit: f.limit } : {}),
  });
}

/**
 * `--inline`: the handlers run here. `input` is every event read: one a workflow's
 * wait or cancelOn may see, whichever are replayed.
 */
function inlineReplayTarget(
  f: ReplayFlags,
  config: Config,
  io: CliIo,
  run: { handlers: Handler[]; input: ReplayItem[]; dryWrites: DryWriteReport[] },
): ReplayTarget {
  const level = io.env['LOG_LEVEL'] ? config.logLevel : 'warn';
  const log = createLogger({ level, destination: io.stderr });
  const api =
    config.workspaceApiUrl && config.workspaceApiToken
      ? { baseUrl: config.workspaceApiUrl, token: config.workspaceApiToken, burst: config.workspaceApiBurst }
      : undefined;
  if (!api && !f.json)
    io.stderr.write('replay --inline: WORKSPACE_API_URL / WORKSPACE_API_TOKEN unset; handlers that call the API will fail\n');
  return inlineTarget({
    handlers: run.handlers,
    api,
    env: io.env,
    log,
    signal: io.stopSignal,
    reuseKeys: f.reuseKeys,
    dryRun: f.dryRun,
    onDryWrite: (w) => run.dryWrites.push(w),
    input: run.input,
    workspace: config.workspaceId,
  });
}

/** Replays the items to the target and prints the summary (`--json`) or each delivery. */
async function replayTo(
  f: ReplayFlags,
  io: CliIo,
  items: ReplayItem[],
  target: ReplayTarget,
  dryWrites: DryWriteReport[],
): Promise<ExitCode> {
  const reporter = f.json ? undefined : io.stderr.isTTY && !f.verbose ? progressReporter(io.stderr) : lineReporter(io.stdout);
  const summary = await runReplay(items, target, {
    concurrency: f.concurrency,
    newIds: f.newIds,
    signal: io.stopSignal,
    ...(reporter ? { reporter } : {}),
  });
  if (f.json) {
    const writes = dryWrites.map((w) => ({ ...w, body: printableBody(w.body), dry: true }));
    io.stdout.write(`${JSON.stringify(f.dryRun ? { ...summary, dryRun: true, writes } : summary)}\n`);
  }
  return replayFailed(summary) ? EXIT.failed : EXIT.ok;
}

export const replayCommand: Command = {
  name: 'replay',
  help: HELP,
  async run(argv, io) {
    const f = parseReplay(argv);
    if (!f) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    const config = cliConfig(io, f.workspace);
    // --inline runs handler modules in this process: Switchyard's secrets now live only in `config`.
    if (f.inline) dropSecrets(process.env, secretVariables(config));
    const handlers = f.handlerId !== undefined || f.inline ? await handlersFor(config, f.handlerId) : [];
    const input = await readItems(f, io);
    const items = chooseItems(f, input, handlers);
    const dryWrites: DryWriteReport[] = [];
    const { target, close } = f.inline
      ? { target: inlineReplayTarget(f, config, io, { handlers, input, dryWrites }), close: async (): Promise<void> => {} }
      : await deliveryTarget(config, { direct: f.direct, to: f.to, secret: f.secret, concurrency: f.concurrency }, io);
    try {
      return await replayTo(f, io, items, target, dryWrites);
    } finally {
      await close();
    }
  },
};
