import { userInfo } from 'node:os';
import type { Config } from '../config/index.js';
import { runNoteWriter } from '../history/index.js';
import {
  cancelParkedRuns,
  openHandlerQueues,
  resolveParkedRun,
  selectParkedRuns,
  wakeParkedRun,
  type CancelResult,
  type ParkedRun,
  type ParkedRunDeps,
  type RunActor,
  type RunFilter,
  type WakeResult,
} from '../queue/index.js';
import type { RedisClient } from '../redis/index.js';
import { parseDuration, printable } from '../util/index.js';
import { parseWheres, WhereError, type WhereQuery } from '../events/index.js';
import { parseCommandArgs, str, strs, type ParsedArgs } from './args.js';
import { EXIT, UsageError, type CliIo, type ExitCode } from './command.js';
import { confirm } from './confirm.js';
import { formatWaits, waitRows } from './waits-table.js';
import { withRedis } from './with-redis.js';
import { WORKSPACE_OPTION, workspaceHelp } from './flags.js';

export const CANCEL_HELP = `Usage: switchyard waits cancel <run> [--handler ID] [--actor NAME] [--reason TEXT] [--json]
       switchyard waits cancel [--handler ID] [--kind sleep|wait] [--due-within AGE] [--where PATH OP VALUE]…
                               [--yes] [--actor NAME] [--reason TEXT] [--json]

Cancels parked runs: each is ended for good where it sleeps or waits (no
further step of it runs, its job is removed, its waits and cancelOn entries
are forgotten, an ordered run hands its key to the next run) and the delivery's
history records who did it (\`switchyard trace\`).

<run> names one run: the delivery key that \`switchyard waits\` shows (with
--handler when runs of several handlers are parked for that delivery), or the
run's job id d/<key>/<handler> (\`waits --json\` "jobId", \`dlq list\`).
Without <run>, the filters select the runs (at least one is needed): the
selected runs are listed, then confirmed on a terminal; --yes cancels without
asking, and without a terminal --yes is required (exit 2 otherwise).
A run that is running at that moment (it woke) is cancelled once it parks
again; one that ends first is reported "not parked any more".

Options:
  --handler ID       the run of this handler (with <run>); this handler's runs (without)
  --kind KIND        sleep or wait (without <run>)
  --due-within AGE   runs due within AGE from now (without <run>)
  --where PATH OP VALUE  runs whose own event matches (without <run>; repeatable, all must hold):
                     data.conversation_id=38, 'data.body~refund' (contains), data.status!=open,
                     paths as \`switchyard events\` lists them; read from the run's job, so no
                     kept body is needed
  --yes              cancel the selected runs without asking
  --actor NAME       who cancels, as the history records it (default: the OS user)
  --reason TEXT      why, recorded beside it
  --json             one JSON object: { results: [{ ...run, status }] }
${workspaceHelp(21)}
Examples:
  switchyard waits cancel evt_01HZX3 --handler sla-escalation --reason "bad deploy"
  switchyard waits cancel --handler old-follow-up --yes
  switchyard waits cancel --handler sla-escalation --where data.conversation_id=38
`;

export const WAKE_HELP = `Usage: switchyard waits wake <run> [--handler ID] [--actor NAME] [--reason TEXT] [--json]

Wakes one parked run now: a sleep ends now, a wait returns null as if it
timed out (unless its event answered it first: then it returns that event).
The run goes on once, from where it was parked. The delivery's history
records who woke it (\`switchyard trace\`). <run> is named as for
\`waits cancel\`: the delivery key \`switchyard waits\` shows (with --handler
when several handlers' runs of it are parked), or the job id d/<key>/<handler>.

Options:
  --handler ID       the run of this handler
  --actor NAME       who wakes it, as the history records it (default: the OS user)
  --reason TEXT      why, recorded beside it
  --json             one JSON object: { result: { ...run, status } }
${workspaceHelp(21)}
Example:
  switchyard waits wake evt_01HZX3 --handler trial-reminder
`;

const KINDS = { sleep: 'sleep', wait: 'wait-for-event' } as const;

const OPTIONS = {
  handler: { type: 'string' },
  kind: { type: 'string' },
  'due-within': { type: 'string' },
  where: { type: 'string', multiple: true },
  yes: { type: 'boolean' },
  actor: { type: 'string' },
  reason: { type: 'string' },
  json: { type: 'boolean' },
  ...WORKSPACE_OPTION,
} as const;

/** Who the CLI says did it: --actor, else the OS user. */
function actorOf(values: ParsedArgs['values'], env: CliIo['env']): RunActor {
  let who = str(values, 'actor')?.trim();
  if (!who) {
    try {
      who = userInfo().username;
    } catch {
      who = env['USER'] ?? env['LOGNAME'] ?? 'unknown user';
    }
  }
  const reason = str(values, 'reason')?.trim();
  return { who, via: 'cli', ...(reason ? { reason } : {}) };
}

/** --handler, --kind, --due-within and --where as a filter of parked runs (`waits`, `waits cancel`). */
export function runFilterFlags(values: ParsedArgs['values']): RunFilter {
  const kind = str(values, 'kind');
  if (kind !== undefined && !(kind in KINDS)) throw new UsageError(`--kind: expected sleep or wait, got "${kind}"`);
  const due = str(values, 'due-within');
  const dueWithinMs = due === undefined ? undefined : parseDuration(due);
  if (dueWithinMs === null) throw new UsageError(`--due-within: expected a duration such as 30s, 15m, 2h or 3d, got "${due}"`);
  const handler = str(values, 'handler');
  const where = strs(values, 'where');
  let query: WhereQuery | undefined;
  try {
    query = where.length > 0 ? parseWheres(where) : undefined;
  } catch (err) {
    if (err instanceof WhereError) throw new UsageError(err.message);
    throw err;
  }
  return {
    ...(query === undefined ? {} : { where: query }),
    ...(handler === undefined ? {} : { handler }),
    ...(kind === undefined ? {} : { kind: KINDS[kind as keyof typeof KINDS] }),
    ...(dueWithinMs === undefined ? {} : { dueWithinMs }),
  };
}

function deps(redis: RedisClient, prefix: string, config: Config): ParkedRunDeps {
  return {
    redis,
    prefix,
    queues: openHandlerQueues(redis, prefix),
    ...(config.history.enabled ? { history: runNoteWriter(redis, prefix, config.history.ttlMs) } : {}),
  };
}

const what = (r: ParkedRun) =>
  `${printable(r.handler)} in ${r.kind === 'sleep' ? 'sleep' : 'wait'} ${printable(r.name)}, delivery ${printable(r.deliveryKey)}`;

const CANCEL_WORDS: Record<CancelResult['status'], string> = {
  cancelled: 'cancelled',
  finished: 'not parked any more (it ended, or was cancelled before):',
  running: 'NOT cancelled, still running (try again once it parks or ends):',
};

const WAKE_WORDS: Record<WakeResult['status'], string> = {
  woken: 'woken: its sleep ends now:',
  timeout: 'woken: its wait returns null now:',
  matched: 'not woken: an event answered its wait first (it goes on with it):',
  running: 'not woken: it is running now (it woke already):',
  finished: 'not woken: not parked any more:',
};

/** The one run `<run>` (and --handler) names; a reference naming none or several is an error saying so. */
async function oneRun(io: CliIo, d: ParkedRunDeps, ref: string, handler: string | undefined): Promise<ParkedRun | null> {
  const found = await resolveParkedRun(d, ref, handler);
  if (found.length > 1) {
    throw new UsageError(
      `"${ref}" names ${found.length} parked runs (handlers ${found.map((r) => r.handler).join(', ')}): add --handler ID, or give the job id (${found[0]?.jobId ?? ''})`,
    );
  }
  if (found.length === 0) {
    io.stderr.write(
      `no parked run is named "${printable(ref)}"${handler ? ` for handler ${printable(handler)}` : ''}: ` +
        'give the delivery key `switchyard waits` shows (with --handler), or the job id d/<key>/<handler>; ' +
        'a run that ended or was cancelled is not parked any more\n',
    );
    return null;
  }
  return found[0] as ParkedRun;
}

/** `switchyard waits cancel`. */
export async function cancelCommand(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS, true);
  if (values.help) {
    io.stdout.write(CANCEL_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 1) throw new UsageError(`cancel takes one run, got ${positionals.length}: ${positionals.join(' ')}`);
  const [ref] = positionals;
  const filter = runFilterFlags(values);
  if (ref !== undefined && (filter.kind !== undefined || filter.dueWithinMs !== undefined || filter.where !== undefined))
    throw new UsageError('--kind, --due-within and --where select runs: give them without <run>');
  if (ref === undefined && Object.keys(filter).length === 0)
    throw new UsageError(
      'name a run (a delivery key or job id as `switchyard waits` shows it), or select runs with --handler, --kind, --due-within or --where',
    );
  const actor = actorOf(values, io.env);
  return withRedis(io, 'waits cancel', str(values, 'workspace'), async (redis, prefix, config) => {
    const d = deps(redis, prefix, config);
    let runs: ParkedRun[];
    if (ref !== undefined) {
      const run = await oneRun(io, d, ref, filter.handler);
      if (!run) return EXIT.failed;
      runs = [run];
    } else {
      runs = await selectParkedRuns(d, filter);
      if (runs.length === 0) {
        io.stdout.write('No parked run matches: nothing to cancel.\n');
        return EXIT.ok;
      }
      const refused = await confirmMany(io, runs, Boolean(values.yes), Boolean(values.json));
      if (refused !== null) return refused;
    }
    const results = await cancelParkedRuns(d, runs, actor);
    if (values.json) io.stdout.write(`${JSON.stringify({ results: results.map((r) => ({ ...r.run, status: r.status })) })}\n`);
    else {
      for (const r of results) io.stdout.write(`${CANCEL_WORDS[r.status]} ${what(r.run)}\n`);
      const n = results.filter((r) => r.status === 'cancelled').length;
      io.stdout.write(`${n} of ${results.length} run${results.length === 1 ? '' : 's'} cancelled by ${printable(actor.who)}.\n`);
    }
    return results.some((r) => r.status === 'running') ? EXIT.failed : EXIT.ok;
  });
}

/**
 * Before cancelling several runs: how many and which, then the question on a terminal. Null: go on; else the exit
 * code (declined: 1; nobody to ask and no --yes: 2).
 */
async function confirmMany(io: CliIo, runs: readonly ParkedRun[], yes: boolean, json: boolean): Promise<ExitCode | null> {
  const n = `${runs.length} parked run${runs.length === 1 ? '' : 's'}`;
  // With --json the list goes to stderr: stdout keeps only the JSON of the results.
  (json ? io.stderr : io.stdout).write(
    `${n} ${runs.length === 1 ? 'matches' : 'match'}:\n${formatWaits(waitRows(runs, Date.now()), runs.length)}`,
  );
  if (yes) return null;
  const answer = await confirm(io, `Cancel ${runs.length === 1 ? 'it' : `these ${runs.length}`}? [y/N] `);
  if (answer === null) {
    io.stderr.write(`refusing to cancel ${n} without confirmation: stdin is not a terminal; add --yes to cancel them\n`);
    return EXIT.usage;
  }
  if (!answer) {
    io.stderr.write('Nothing cancelled.\n');
    return EXIT.failed;
  }
  return null;
}

/** `switchyard waits wake`. */
export async function wakeCommand(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseCommandArgs(
    argv,
    { handler: OPTIONS.handler, actor: OPTIONS.actor, reason: OPTIONS.reason, json: OPTIONS.json, ...WORKSPACE_OPTION },
    true,
  );
  if (values.help) {
    io.stdout.write(WAKE_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1)
    throw new UsageError(`wake takes one run (a delivery key or job id as \`switchyard waits\` shows it), got ${positionals.length}`);
  const actor = actorOf(values, io.env);
  return withRedis(io, 'waits wake', str(values, 'workspace'), async (redis, prefix, config) => {
    const d = deps(redis, prefix, config);
    const run = await oneRun(io, d, positionals[0] as string, str(values, 'handler'));
    if (!run) return EXIT.failed;
    const r = await wakeParkedRun(d, run, actor);
    if (values.json) io.stdout.write(`${JSON.stringify({ result: { ...r.run, status: r.status } })}\n`);
    else io.stdout.write(`${WAKE_WORDS[r.status]} ${what(r.run)}\n`);
    return r.status === 'woken' || r.status === 'timeout' ? EXIT.ok : EXIT.failed;
  });
}
