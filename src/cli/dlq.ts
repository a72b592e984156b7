import { QUEUE_NAMES, type QueueName, type DeadFilter } from '../queue/index.js';
import { parseDuration } from '../util/index.js';
import { intFlag, parseCommandArgs, str, type ParsedArgs } from './args.js';
import { EXIT, UsageError, type CliIo, type Command } from './command.js';
import { DLQ_SUBCOMMANDS, type DlqRequest } from './dlq-run.js';
import { WORKSPACE_OPTION, eventFlags, timeFlag, workspaceHelp } from './flags.js';

export { shortReason } from './dlq-print.js';

const HELP = `Usage: switchyard dlq <list|show|retry|purge|resume> [options]

The dead-letter queue: deliveries that are not valid events (queue "events",
raw body kept), handler runs that failed for good (queue "handlers", or
"handlers-high" / "handlers-low" for handlers with that priority) and schedule
runs that failed for good (queue "schedules": HANDLER is the schedule, the key
schedule:<id>:<tick>; a retry runs that tick again, with its Idempotency-Keys).
Needs REDIS_URL (and QUEUE_PREFIX) of your receiver and workers; without
REDIS_URL, the managed Redis of a running \`npm run dev\` or \`switchyard start\`
(found through .switchyard/redis.url).

Subcommands:
  list                 dead jobs, newest first: id, queue, event, handler, age, attempts,
                       reason (its first line, cut at a word with … past 120 characters)
  show <id|key>        a job (or every dead job of a delivery key): payload, error, attempts,
                       and the \`switchyard trace\` line for its delivery's (or schedule run's) history
  retry                move the matching jobs back to waiting, attempts reset (after a fix)
  purge                delete the matching jobs (needs a filter or --all)
  resume               unpause the handlers queue paused for an unusable API token

Filters (list, retry, purge):
  --queue events|handlers|handlers-high|handlers-low|schedules   (handlers: every priority)
  --event NAME (or schedule)   --handler ID (a handler or a schedule)   --reason TEXT (substring)
                       (a --handler matching no job that names no handler or schedule of HANDLERS_DIR
                       nor of any dead job is an error: exit 1, with a did-you-mean)
  --since AGE|DATE     failed within AGE (2h, 7d) or at/after DATE
  --older-than AGE     failed more than AGE ago
  --limit N
  --all                purge: everything (no filter)
  --json               machine-readable output
${workspaceHelp(23)}
Examples:
  switchyard dlq list --handler follow-up-task
  switchyard dlq retry --handler follow-up-task --since 1h
`;

function filterFrom(values: ParsedArgs['values']): DeadFilter {
  const f: DeadFilter = {};
  const queue = str(values, 'queue');
  if (queue !== undefined) {
    if (!(QUEUE_NAMES as readonly string[]).includes(queue))
      throw new UsageError(`--queue: expected ${QUEUE_NAMES.join(', ')}, got "${queue}"`);
    f.queue = queue as QueueName;
  }
  // `schedule` is the EVENT column of a schedule run.
  const given = str(values, 'event');
  const event = given === 'schedule' ? given : eventFlags(given ? [given] : [])[0];
  if (event) f.event = event;
  const handler = str(values, 'handler');
  if (handler) f.handler = handler;
  const reason = str(values, 'reason');
  if (reason) f.reason = reason;
  const since = str(values, 'since');
  if (since !== undefined) f.since = timeFlag('since', since);
  const older = str(values, 'older-than');
  if (older !== undefined) {
    const ms = parseDuration(older);
    if (ms === null) throw new UsageError(`--older-than: expected an age such as 2h, 30m, 7d, got "${older}"`);
    f.before = Date.now() - ms;
  }
  const limit = intFlag('limit', str(values, 'limit'), 1, Number.MAX_SAFE_INTEGER);
  if (limit !== undefined) f.limit = limit;
  return f;
}

const SUBCOMMANDS = ['list', 'show', 'retry', 'purge', 'resume'] as const;

/** The `dlq` command line as a request; undefined for `--help`. */
function parseDlq(argv: readonly string[], io: CliIo): DlqRequest | undefined {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      queue: { type: 'string' },
      event: { type: 'string' },
      handler: { type: 'string' },
      reason: { type: 'string' },
      since: { type: 'string' },
      'older-than': { type: 'string' },
      limit: { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
      ...WORKSPACE_OPTION,
    },
    true,
  );
  if (values.help) return undefined;
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new UsageError(`expected a subcommand: ${SUBCOMMANDS.join(', ')}`);
  if (!(SUBCOMMANDS as readonly string[]).includes(sub))
    throw new UsageError(`unknown subcommand "${sub}"; expected one of ${SUBCOMMANDS.join(', ')}`);
  if (sub === 'show' ? rest.length !== 1 : rest.length !== 0) {
    throw new UsageError(
      sub === 'show'
        ? 'show expects one job id or delivery key (as `dlq list` prints)'
        : `${sub} takes no positional arguments, got "${rest.join(' ')}"`,
    );
  }
  const filter = filterFrom(values);
  return {
    io,
    sub: sub as DlqRequest['sub'],
    target: rest[0],
    filter,
    json: Boolean(values.json),
    all: Boolean(values.all),
    workspace: str(values, 'workspace'),
  };
}

export const dlqCommand: Command = {
  name: 'dlq',
  help: HELP,
  async run(argv, io) {
    const r = parseDlq(argv, io);
    if (!r) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    return DLQ_SUBCOMMANDS[r.sub](r);
  },
};
