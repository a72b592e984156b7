import { parseWheres, WhereError, type EventName } from '../events/index.js';
import { formatDeliveries, listDeliveries, DELIVERY_OUTCOMES, type DeliveryFilter, type DeliveryListing } from '../history/index.js';
import { intFlag, parseCommandArgs, str, strs, type ParsedArgs } from './args.js';
import { EXIT, UsageError, type Command } from './command.js';
import { WORKSPACE_OPTION, eventFlags, timeFlag, workspaceHelp } from './flags.js';
import { withRedis } from './with-redis.js';

/** The options of the delivery filters (`deliveries`; `rerun` takes the same), for `parseCommandArgs`. */
export const DELIVERY_FILTER_OPTIONS = {
  event: { type: 'string' },
  conversation: { type: 'string' },
  contact: { type: 'string' },
  handler: { type: 'string' },
  outcome: { type: 'string' },
  since: { type: 'string' },
  where: { type: 'string', multiple: true },
} as const;

/** The filter help lines of {@link DELIVERY_FILTER_OPTIONS}. */
export const DELIVERY_FILTER_HELP = `  --event NAME           the event name, or schedule (the runs of schedules)
  --conversation ID      the event's conversation id
  --contact ID           the event's contact id
  --handler ID           a handler subscribed to it, or a schedule
  --outcome STATE        a handler's latest state (with --handler: that handler's): completed, skipped,
                         retry, delay, dead, pause, wait (sleeping or waiting), cancelled, error; pending (placed, not run yet); or the
                         delivery's: invalid (dead-lettered without fan-out), no_handlers
  --since AGE|DATE       received within AGE (30m, 2h, 7d) or at/after DATE
  --where PATH OP VALUE  the event's content, from its kept body (KEEP_BODIES); repeatable, all must hold.
                         PATH is data. and a field \`switchyard events\` lists (with --event: of that event);
                         OP is = (equals, as text or number), != (differs; the field must be there) or ~ (contains,
                         ignoring case); e.g. data.conversation_id=38, 'data.body~refund'
`;

/**
 * The delivery filters of parsed flags ({@link DELIVERY_FILTER_OPTIONS}), each checked: a bad value, or a `--where`
 * that does not parse or names no field of the catalogue, is a UsageError saying what was expected.
 */
export function deliveryFilterFlags(values: ParsedArgs['values']): DeliveryFilter {
  const f: { -readonly [K in keyof DeliveryFilter]: DeliveryFilter[K] } = {};
  const event = str(values, 'event');
  // `schedule`: the runs of schedules (their EVENT column).
  if (event !== undefined) f.event = event === 'schedule' ? event : eventFlags([event])[0];
  for (const name of ['conversation', 'contact'] as const) {
    const v = str(values, name);
    if (v === undefined) continue;
    if (!/^\d+$/.test(v.trim())) throw new UsageError(`--${name}: expected a numeric id, got "${v}"`);
    f[name] = v.trim();
  }
  const handler = str(values, 'handler');
  if (handler) f.handler = handler;
  const outcome = str(values, 'outcome');
  if (outcome !== undefined) {
    if (!DELIVERY_OUTCOMES.includes(outcome))
      throw new UsageError(`--outcome: expected one of ${DELIVERY_OUTCOMES.join(', ')}, got "${outcome}"`);
    f.outcome = outcome;
  }
  const since = str(values, 'since');
  if (since !== undefined) f.since = timeFlag('since', since);
  const where = strs(values, 'where');
  if (where.length > 0) {
    if (f.event === 'schedule') throw new UsageError('--where reads an event body; a schedule run has none (drop --event schedule)');
    try {
      f.where = parseWheres(where, f.event as EventName | undefined);
    } catch (err) {
      if (err instanceof WhereError) throw new UsageError(err.message);
      throw err;
    }
  }
  return f;
}

const DELIVERIES_HELP = `Usage: switchyard deliveries [filters] [--limit N] [--json]

Deliveries in the history (HISTORY_TTL, 7 days by default), newest first, with
each subscribed handler's latest state; schedule runs among them (EVENT
schedule, received at their tick, HANDLERS the schedule and its latest state).
A handler's latest re-run (\`switchyard rerun\`) is shown beside its state
(stepper:completed (rerun r1:completed)); \`switchyard trace <key>\` shows one.
Needs REDIS_URL (and QUEUE_PREFIX) like \`switchyard dlq\`.

Filters (every one given must hold):
${DELIVERY_FILTER_HELP}  --limit N              at most N rows (default 50)
  --json                 machine-readable output
${workspaceHelp(25)}
Without --where, the newest 20 000 deliveries are read at most. With --where,
the whole history is read (a page at a time) until --limit rows match, and a
last line says how many deliveries were read and how many could not be
matched because their body is not kept.

Examples:
  switchyard deliveries --conversation 812 --since 1h
  switchyard deliveries --handler follow-up-task --outcome dead
  switchyard deliveries --event schedule --since 1d
  switchyard deliveries --event contact.created --where data.email=zoe@example.com
  switchyard deliveries --where 'data.body~refund' --where data.conversation_id=38 --since 2d
`;

/** The lines after the table: why the listing stopped, and what a content query read. */
function footer(r: DeliveryListing, f: DeliveryFilter): string {
  let out = '';
  if (r.more) {
    out +=
      r.deliveries.length >= (f.limit ?? 50)
        ? `(the newest ${r.deliveries.length} shown; --limit for more)\n`
        : `(stopped after reading ${r.scanned} deliveries; narrow with --since for older ones)\n`;
  }
  if (f.where) {
    const of = f.where.events.length === 1 ? `${f.where.events[0]} ` : '';
    out += `(--where: read ${r.scanned} deliveries in the history${r.more ? ' before stopping' : ', all of them'}`;
    if (r.withoutBody > 0) out += `; ${r.withoutBody} ${of}deliveries had no kept body and could not be matched (KEEP_BODIES)`;
    if (r.unreadable > 0) out += `; ${r.unreadable} kept bodies could not be read (written by another version, or damaged)`;
    out += ')\n';
  }
  return out;
}

export const deliveriesCommand: Command = {
  name: 'deliveries',
  help: DELIVERIES_HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      ...DELIVERY_FILTER_OPTIONS,
      ...WORKSPACE_OPTION,
      limit: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (values.help) {
      io.stdout.write(DELIVERIES_HELP);
      return EXIT.ok;
    }
    const f: DeliveryFilter = { ...deliveryFilterFlags(values) };
    const limit = intFlag('limit', str(values, 'limit'), 1, 10_000);
    const filter = limit === undefined ? f : { ...f, limit };
    return withRedis(io, 'deliveries', str(values, 'workspace'), async (redis, prefix) => {
      const r = await listDeliveries(redis, prefix, filter);
      if (values.json) io.stdout.write(`${JSON.stringify(r)}\n`);
      else io.stdout.write(formatDeliveries(r.deliveries) + footer(r, filter));
      return EXIT.ok;
    });
  },
};
