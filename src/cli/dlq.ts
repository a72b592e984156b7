import { Queue } from 'bullmq';
import {
  QUEUE_NAMES,
  EVENTS_QUEUE,
  SCHEDULES_QUEUE,
  isHandlerQueue,
  type QueueName,
  handlerQueueList,
  openHandlerQueues,
  listDead,
  pauseStatus,
  purgeDead,
  resumeDead,
  retryDead,
  showDead,
  type DeadEntry,
  type DeadFilter,
  type DlqQueues,
} from '../queue/index.js';
import { printable as p, printableLines, parseDuration } from '../util/index.js';
import { intFlag, parseCommandArgs, str, type ParsedArgs } from './args.js';
import { EXIT, UsageError, type CliIo, type Command } from './command.js';
import type { Config } from '../config/index.js';
import { cliConfig, cliRedis } from './connect.js';
import { unknownHandler } from './dlq-handler.js';
import { eventFlags, timeFlag } from './flags.js';

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

Examples:
  switchyard dlq list --handler follow-up-task
  switchyard dlq retry --handler follow-up-task --since 1h
`;

const age = (ms: number | null): string => {
  if (ms === null) return '?';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : s < 172_800 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86_400)}d`;
};

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

const REASON_WIDTH = 120;

/**
 * The first line of a reason in at most `max` characters, cut at a word
 * boundary with an ellipsis when it is longer (or has more lines); a single
 * word longer than `max` is cut inside it. `dlq show` prints it whole.
 */
export function shortReason(reason: string, max = REASON_WIDTH): string {
  const [first = '', ...more] = reason.trim().split('\n');
  const line = first.trimEnd();
  if (line.length <= max && more.length === 0) return line;
  if (line.length <= max - 2) return `${line} …`;
  const room = line.slice(0, max - 1);
  // The character after the room counts: a space there means the room ends with a whole word.
  const space = line.slice(0, max).search(/\s\S*$/);
  return `${(space > max / 2 ? room.slice(0, space) : room).replace(/[\s,;:.-]+$/, '')}…`;
}

function table(entries: readonly DeadEntry[]): string {
  if (entries.length === 0) return 'no dead-lettered jobs match\n';
  const rows = entries.map((e) =>
    [e.id, e.queue, e.event ?? '?', e.handler ?? '-', age(e.failedAt), String(e.attempts), shortReason(e.reason)].map(p),
  );
  const head = ['ID', 'QUEUE', 'EVENT', 'HANDLER', 'AGE', 'TRIES', 'REASON'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return `${[line(head), ...rows.map(line)].join('\n')}\n${entries.length} dead-lettered\n`;
}

async function withQueues<T>(io: CliIo, fn: (q: DlqQueues, config: Config) => Promise<T>): Promise<T> {
  const config = cliConfig(io);
  const needsRedis =
    'dlq needs REDIS_URL (and QUEUE_PREFIX when not "switchyard") of your receiver and workers, ' +
    'or a running `npm run dev` / `switchyard start` with its managed Redis';
  const redis = await cliRedis(config, needsRedis, io.cwd);
  const prefix = config.queuePrefix;
  const events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
  const handlers = openHandlerQueues(redis, prefix);
  const schedules = new Queue(SCHEDULES_QUEUE, { connection: redis, prefix });
  try {
    return await fn({ events, handlers, schedules, redis, prefix }, config);
  } finally {
    await Promise.allSettled([events, ...handlerQueueList(handlers), schedules].map((x) => x.close()));
    redis.disconnect();
  }
}

const SUBCOMMANDS = ['list', 'show', 'retry', 'purge', 'resume'] as const;

export const dlqCommand: Command = {
  name: 'dlq',
  summary: 'list, show, retry, purge dead-lettered jobs; resume a paused handlers queue',
  help: HELP,
  async run(argv, io) {
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
      },
      true,
    );
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
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
    const json = Boolean(values.json);
    const out = (s: string) => io.stdout.write(s);
    /** Nothing matched a `--handler` that names no handler: said on stderr (with a did-you-mean), exit 1, not "0 jobs". */
    const refused = async (matched: readonly DeadEntry[], q: DlqQueues, config: Config): Promise<boolean> => {
      if (filter.handler === undefined || matched.length > 0) return false;
      const why = await unknownHandler(filter.handler, q, config);
      if (why) io.stderr.write(`dlq ${sub}: ${why}\n`);
      return why !== null;
    };

    switch (sub) {
      case 'list':
        return withQueues(io, async (q, config) => {
          const [entries, pause] = await Promise.all([listDead(q, filter), pauseStatus(q)]);
          if (await refused(entries, q, config)) return EXIT.failed;
          if (json) out(`${JSON.stringify({ paused: pause.paused, pauseReason: pause.record?.reason ?? null, entries })}\n`);
          else {
            if (pause.paused) {
              const pausedSince = pause.record ? ` since ${p(pause.record.at)}: ${p(pause.record.reason)}` : '';
              out(`handlers queue is PAUSED${pausedSince}\n  (fix the token, then \`switchyard dlq resume\`)\n`);
            }
            out(table(entries));
          }
          return EXIT.ok;
        });
      case 'show':
        return withQueues(io, async (q) => {
          const details = await showDead(q, rest[0] as string);
          if (details.length === 0) {
            io.stderr.write(
              `dlq show: no dead-lettered job with id or delivery key "${p(rest[0] as string)}" (see \`switchyard dlq list\`)\n`,
            );
            return EXIT.failed;
          }
          if (json) out(`${JSON.stringify(details, null, 2)}\n`);
          else {
            for (const d of details) {
              out(`${p(d.id)}  (queue ${p(d.queue)})\n  delivery:  ${p(d.key)}\n  event:     ${p(d.event ?? '?')}\n`);
              if (d.handler) out(`  handler:   ${p(d.handler)}\n`);
              const failedAt = d.failedAt ? new Date(d.failedAt).toISOString() : '?';
              out(`  received:  ${p(d.receivedAt ?? '?')}\n  failed:    ${failedAt} (${age(d.failedAt)} ago)\n`);
              out(`  attempts:  ${d.attempts} of ${d.maxAttempts}\n  reason:    ${printableLines(d.reason).join('\n             ')}\n`);
              // A schedule run's history is kept under its key (schedule:<id>:<tick>) as a delivery's.
              out(`  trace:     switchyard trace ${p(d.key)}\n`);
              if (d.stacktrace.length) {
                const errors = d.stacktrace.map((s, i) => `    [${i + 1}] ${printableLines(s).slice(0, 4).join('\n        ')}`);
                out(`  errors (latest attempts):\n${errors.join('\n')}\n`);
              }
              const payloadLabel = d.queue === EVENTS_QUEUE ? 'raw body' : d.queue === SCHEDULES_QUEUE ? 'run' : 'event';
              out(
                `  ${payloadLabel}:\n${printableLines(d.payload)
                  .map((l) => `    ${l}`)
                  .join('\n')}\n\n`,
              );
            }
          }
          return EXIT.ok;
        });
      case 'retry':
        return withQueues(io, async (q, config) => {
          const done = await retryDead(q, filter);
          if (await refused(done, q, config)) return EXIT.failed;
          const pause = await pauseStatus(q);
          if (json) out(`${JSON.stringify({ retried: done.length, entries: done })}\n`);
          else {
            for (const e of done) out(`retried ${p(e.id)}\n`);
            out(`${done.length} job${done.length === 1 ? '' : 's'} moved back to waiting\n`);
            if (pause.paused && done.some((e) => isHandlerQueue(e.queue)))
              out('note: the handlers queue is paused; nothing runs until `switchyard dlq resume`\n');
          }
          return EXIT.ok;
        });
      case 'purge': {
        const filtered = Object.keys(filter).length > 0;
        if (!filtered && !values.all)
          throw new UsageError(
            'purge deletes jobs for good: give a filter (--queue, --event, --handler, --reason, --since, --older-than) or --all',
          );
        return withQueues(io, async (q, config) => {
          const done = await purgeDead(q, filter);
          if (await refused(done, q, config)) return EXIT.failed;
          out(
            json
              ? `${JSON.stringify({ purged: done.length, entries: done })}\n`
              : `${done.length} dead job${done.length === 1 ? '' : 's'} deleted\n`,
          );
          return EXIT.ok;
        });
      }
      case 'resume':
        return withQueues(io, async (q) => {
          const r = await resumeDead(q);
          if (json) out(`${JSON.stringify({ resumed: r.wasPaused, was: r.record })}\n`);
          else
            out(
              r.wasPaused
                ? `handlers queue resumed${r.record ? ` (was paused since ${p(r.record.at)}: ${p(r.record.reason)})` : ''}\n`
                : 'handlers queue was not paused\n',
            );
          return EXIT.ok;
        });
    }
    return EXIT.usage;
  },
};
