import { Queue } from 'bullmq';
import { jobIdFor } from '../events/envelope.js';
import { parseJobId } from '../history/keys.js';
import { listDeliveries, PENDING_STATES, readTrace, type DeliveryFilter } from '../history/read.js';
import { formatDeliveries, formatTrace } from '../history/timeline.js';
import { EVENTS_QUEUE } from '../queue/names.js';
import type { RedisClient } from '../redis/connection.js';
import { intFlag, parseCommandArgs, str } from './args.js';
import { EXIT, UsageError, type CliIo, type Command } from './command.js';
import { cliConfig, cliRedis } from './connect.js';
import { eventFlags, timeFlag } from './flags.js';

const NEEDS_REDIS = 'needs REDIS_URL (and QUEUE_PREFIX when not "switchyard") of your receiver and workers, or a running `npm run dev` / `switchyard start` with its managed Redis';

async function withRedis<T>(io: CliIo, what: string, fn: (redis: RedisClient, prefix: string) => Promise<T>): Promise<T> {
  const config = cliConfig(io);
  const redis = await cliRedis(config, `${what} ${NEEDS_REDIS}`, io.cwd);
  try {
    return await fn(redis, config.queuePrefix);
  } finally {
    redis.disconnect();
  }
}

const TRACE_HELP = `Usage: switchyard trace <delivery key | job id> [--json]

What happened to one delivery, from the history the workers keep in Redis
(HISTORY, on by default; kept HISTORY_TTL, 7 days by default): when it was
received (size, which secret verified it) and queued, which handlers fan-out
placed it with, and each handler attempt — start, end, outcome, the error,
the steps it ran or took from the store, and every API call (method, path,
status, Idempotency-Key, replayed or not, duration, rate-limiter wait).
Times are relative to receipt. No body is kept unless HISTORY_BODIES=true.

The reference is a delivery key (the envelope id, or sha256:… of the body) or
a job id as BullMQ, \`dlq list\` and the logs show it (d/<key>, d/<key>/<handler>,
or a debounced burst's b/… job once it ran).
Needs REDIS_URL (and QUEUE_PREFIX) like \`switchyard dlq\`.

Options:
  --json    the whole record: summary and entries (oldest first)

Examples:
  switchyard trace evt_01HZX3
  switchyard trace d/evt_01HZX3/note-on-message --json
`;

export const traceCommand: Command = {
  name: 'trace',
  summary: 'what happened to one delivery: receipt, fan-out, each handler attempt and its API calls',
  help: TRACE_HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' } }, true);
    if (values.help) {
      io.stdout.write(TRACE_HELP);
      return EXIT.ok;
    }
    if (positionals.length !== 1) throw new UsageError('trace expects one delivery key or job id');
    const ref = positionals[0] as string;
    return withRedis(io, 'trace', async (redis, prefix) => {
      const trace = await readTrace(redis, prefix, ref);
      if (!trace) {
        // Not fanned out yet (history starts at fan-out): say so when its `events` job is waiting.
        const waiting = await queuedOnly(redis, prefix, parseJobId(ref)?.key ?? ref);
        if (waiting) {
          io.stdout.write(values.json ? `${JSON.stringify(waiting)}\n` : `delivery ${waiting.key}  ${waiting.event ?? ''}\nreceived ${waiting.receivedAt}\nqueued   ${waiting.queuedAt} (events job ${waiting.state}; its history starts at fan-out)\n`);
          return EXIT.ok;
        }
        io.stderr.write(`trace: nothing recorded for "${ref}" (unknown, older than HISTORY_TTL, or HISTORY=off when it came; \`switchyard deliveries\` lists what is kept)\n`);
        return EXIT.failed;
      }
      io.stdout.write(values.json ? `${JSON.stringify(trace, null, 2)}\n` : formatTrace(trace));
      return EXIT.ok;
    });
  },
};

/** A delivery whose `events` job exists but has not been fanned out yet. */
async function queuedOnly(redis: RedisClient, prefix: string, key: string): Promise<{ key: string; event: string | null; receivedAt: string; queuedAt: string; state: string } | null> {
  const events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
  try {
    const job = await events.getJob(jobIdFor(key));
    if (!job) return null;
    const data = job.data as { name?: string | null; receivedAt?: string };
    return { key, event: data.name ?? null, receivedAt: data.receivedAt ?? '?', queuedAt: new Date(job.timestamp).toISOString(), state: await job.getState() };
  } finally {
    await events.close();
  }
}

const OUTCOMES = ['completed', 'skipped', 'retry', 'delay', 'dead', 'pause', 'error', 'pending', 'invalid', 'no_handlers', ...PENDING_STATES];

const DELIVERIES_HELP = `Usage: switchyard deliveries [filters] [--limit N] [--json]

Deliveries in the history (HISTORY_TTL, 7 days by default), newest first, with
each subscribed handler's latest state. \`switchyard trace <key>\` shows one.
Needs REDIS_URL (and QUEUE_PREFIX) like \`switchyard dlq\`.

Filters (every one given must hold):
  --event NAME           the event name
  --conversation ID      the event's conversation id
  --contact ID           the event's contact id
  --handler ID           a handler subscribed to it
  --outcome STATE        a handler's latest state (with --handler: that handler's): completed, skipped,
                         retry, delay, dead, pause, error; pending (placed, not run yet); or the
                         delivery's: invalid (dead-lettered without fan-out), no_handlers
  --since AGE|DATE       received within AGE (30m, 2h, 7d) or at/after DATE
  --limit N              at most N rows (default 50)
  --json                 machine-readable output

Examples:
  switchyard deliveries --conversation 812 --since 1h
  switchyard deliveries --handler follow-up-task --outcome dead
`;

export const deliveriesCommand: Command = {
  name: 'deliveries',
  summary: 'list deliveries in the history, newest first, filtered by event, conversation, contact, handler, outcome',
  help: DELIVERIES_HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      event: { type: 'string' }, conversation: { type: 'string' }, contact: { type: 'string' }, handler: { type: 'string' },
      outcome: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' },
    });
    if (values.help) {
      io.stdout.write(DELIVERIES_HELP);
      return EXIT.ok;
    }
    const f: { -readonly [K in keyof DeliveryFilter]: DeliveryFilter[K] } = {};
    const event = str(values, 'event');
    if (event !== undefined) f.event = eventFlags([event])[0];
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
      if (!OUTCOMES.includes(outcome)) throw new UsageError(`--outcome: expected one of ${OUTCOMES.join(', ')}, got "${outcome}"`);
      f.outcome = outcome;
    }
    const since = str(values, 'since');
    if (since !== undefined) f.since = timeFlag('since', since);
    const limit = intFlag('limit', str(values, 'limit'), 1, 10_000);
    if (limit !== undefined) f.limit = limit;
    return withRedis(io, 'deliveries', async (redis, prefix) => {
      const r = await listDeliveries(redis, prefix, f);
      if (values.json) io.stdout.write(`${JSON.stringify(r)}\n`);
      else {
        io.stdout.write(formatDeliveries(r.deliveries));
        if (r.more) {
          io.stdout.write(r.deliveries.length >= (f.limit ?? 50)
            ? `(the newest ${r.deliveries.length} shown; --limit for more)\n`
            : `(stopped after reading ${r.scanned} deliveries; narrow with --since for older ones)\n`);
        }
      }
      return EXIT.ok;
    });
  },
};
