import { workspaceConfigs, type Config } from '../config/index.js';
import { Queue } from 'bullmq';
import { jobIdFor } from '../events/index.js';
import { formatDuration } from '../handler/index.js';
import { historyKeys, parseJobId, readTrace, formatTrace } from '../history/index.js';
import {
  EVENTS_QUEUE,
  ingestKeys,
  SCHEDULES_QUEUE,
  parseRerunJobId,
  parseScheduleRef,
  scheduleJobId,
  scheduleKey,
} from '../queue/index.js';
import type { RedisClient } from '../redis/index.js';
import { parseCommandArgs, str } from './args.js';
import { WORKSPACE_OPTION, workspaceHelp } from './flags.js';
import { EXIT, UsageError, type Command } from './command.js';
import { withRedis } from './with-redis.js';
import { printable } from '../util/index.js';

const TRACE_HELP = `Usage: switchyard trace <delivery key | job id> [--json]

What happened to one delivery, from the history the workers keep in Redis
(HISTORY, on by default; kept HISTORY_TTL, 7 days by default): when it was
received (size, which secret verified it) and queued, which handlers fan-out
placed it with, and each handler attempt — start, end, outcome, the error,
the steps it ran or took from the store, and every API call (method, path,
status, Idempotency-Key, replayed or not, duration, rate-limiter wait).
Times are relative to receipt. No body is shown unless HISTORY_BODIES=true (a
redacted copy); the exact body kept for \`deliveries --where\` and \`rerun\`
(KEEP_BODIES) is never printed.
A schedule's run for one tick has the same history: its tick, then each
attempt with its steps and API calls.

The reference is a delivery key (the envelope id, or sha256:… of the body) or
a job id as BullMQ, \`dlq list\` and the logs show it (d/<key>, d/<key>/<handler>,
or a debounced burst's b/… job once it ran); for a schedule run, its key
schedule:<id>:<tick ISO> or its job id repeat:<id>:<tick ms>; for a re-run
(\`switchyard rerun\`), its job id r/<key>/<handler>/<rerun id>, which the
trace of the original lists ("rerun <id> (batch …)"); a re-run's own trace
says "rerun of <original>, batch …" and shows its attempts.
When nothing is recorded it says why: HISTORY=off, kept no longer (older than
HISTORY_TTL), received or run but not recorded, not run yet, or unknown.
Needs REDIS_URL (and QUEUE_PREFIX) like \`switchyard dlq\`.

Options:
  --json    the whole record: summary and entries (oldest first)
${workspaceHelp(12)}
Examples:
  switchyard trace evt_01HZX3
  switchyard trace d/evt_01HZX3/note-on-message --json
  switchyard trace schedule:morning-digest:2025-03-04T08:00:00.000Z
`;

export const traceCommand: Command = {
  name: 'trace',
  help: TRACE_HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' }, ...WORKSPACE_OPTION }, true);
    if (values.help) {
      io.stdout.write(TRACE_HELP);
      return EXIT.ok;
    }
    if (positionals.length !== 1) throw new UsageError('trace expects one delivery key or job id');
    const ref = positionals[0] as string;
    if (ref.trim() === '') throw new UsageError('trace expects a delivery key or job id, got an empty one');
    return withRedis(io, 'trace', str(values, 'workspace'), async (redis, prefix, config) => {
      const trace = await readTrace(redis, prefix, ref);
      if (!trace) {
        if (!config.history.enabled) {
          io.stderr.write(
            `trace: nothing recorded for "${printable(ref)}": ` +
              'delivery history is off (HISTORY=off); workers with HISTORY=off record nothing. ' +
              'Set HISTORY=on (the default) on the workers to record deliveries and schedule runs from then on\n',
          );
          return EXIT.failed;
        }
        const scheduled = parseScheduleRef(ref);
        // Not run or not fanned out yet (history starts then): say so when its job is waiting.
        const waiting = scheduled
          ? await scheduledOnly(redis, prefix, scheduled)
          : parseRerunJobId(ref)
            ? null
            : await queuedOnly(redis, prefix, parseJobId(ref)?.key ?? ref);
        if (waiting && !waiting.ran) {
          const scheduleRun =
            `schedule run ${printable(waiting.key)}\ntick     ${waiting.receivedAt}\n` +
            `queued   (schedules job ${waiting.state}; its history starts when it runs)\n`;
          const delivery =
            `delivery ${printable(waiting.key)}  ${printable(waiting.event ?? '')}\nreceived ${printable(waiting.receivedAt)}\n` +
            `queued   ${waiting.queuedAt} (events job ${waiting.state}; its history starts at fan-out)\n`;
          io.stdout.write(values.json ? `${JSON.stringify(waiting)}\n` : scheduled ? scheduleRun : delivery);
          return EXIT.ok;
        }
        const elsewhere = await otherWorkspaceOf(redis, config, ref);
        io.stderr.write(
          elsewhere
            ? `trace: nothing recorded for "${printable(ref)}" in workspace ${config.workspaceId}; it is a delivery of workspace ${elsewhere}: ` +
                `switchyard trace ${printable(ref)} --workspace ${elsewhere}\n`
            : `trace: nothing recorded for "${printable(ref)}": ${printable(await whyNothing(redis, config, ref, scheduled, waiting))}\n`,
        );
        return EXIT.failed;
      }
      io.stdout.write(values.json ? `${JSON.stringify(trace, null, 2)}\n` : formatTrace(trace));
      return EXIT.ok;
    });
  },
};

/** In a deployment of many, the other workspace whose history has `ref` (a `--workspace` mistaken), or null. */
async function otherWorkspaceOf(redis: RedisClient, config: Config, ref: string): Promise<string | null> {
  if (!config.workspaces) return null;
  for (const ws of workspaceConfigs(config)) {
    if (ws.workspaceId !== config.workspaceId && (await readTrace(redis, ws.queuePrefix, ref))) return ws.workspaceId;
  }
  return null;
}

/** A job found for a reference with no history; `ran`: it finished (completed or failed) without any being recorded. */
interface Waiting {
  key: string;
  event: string | null;
  receivedAt: string;
  queuedAt: string;
  state: string;
  ran: boolean;
}

const FINISHED = ['completed', 'failed'];

/** A delivery whose `events` job exists but has not been fanned out yet. */
async function queuedOnly(redis: RedisClient, prefix: string, key: string): Promise<Waiting | null> {
  const events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
  try {
    const job = await events.getJob(jobIdFor(key));
    if (!job) return null;
    const data = job.data as { name?: string | null; receivedAt?: string };
    const state = await job.getState();
    return {
      key,
      event: data.name ?? null,
      receivedAt: data.receivedAt ?? '?',
      queuedAt: new Date(job.timestamp).toISOString(),
      state,
      ran: FINISHED.includes(state),
    };
  } finally {
    await events.close();
  }
}

/** The `schedules` job of a schedule's tick, when it is still in the queue (waiting, delayed, running, or kept once finished). */
async function scheduledOnly(redis: RedisClient, prefix: string, ref: { id: string; tickMs: number }): Promise<Waiting | null> {
  const schedules = new Queue(SCHEDULES_QUEUE, { connection: redis, prefix });
  try {
    const job = await schedules.getJob(scheduleJobId(ref.id, ref.tickMs));
    if (!job) return null;
    const state = await job.getState();
    const tick = new Date(ref.tickMs).toISOString();
    return {
      key: scheduleKey(ref.id, ref.tickMs),
      event: 'schedule',
      receivedAt: tick,
      queuedAt: new Date(job.timestamp).toISOString(),
      state,
      ran: FINISHED.includes(state),
    };
  } finally {
    await schedules.close();
  }
}

/**
 * Why nothing is recorded (history is on): kept no longer (older than HISTORY_TTL, known from the delivery's
 * dedupe marker, which holds its receipt time, from the history's index, or from a schedule run's tick),
 * received or run but not recorded (HISTORY was off on the workers then), or unknown.
 */
async function whyNothing(
  redis: RedisClient,
  config: Config,
  ref: string,
  scheduled: { id: string; tickMs: number } | null,
  job: Waiting | null,
  now = Date.now(),
): Promise<string> {
  const ttl = config.history.ttlMs;
  const expired = (what: string, at: number) =>
    `${what} ${new Date(at).toISOString()}, longer ago than HISTORY_TTL (${formatDuration(ttl)}), so its history has expired`;
  if (scheduled) {
    if (scheduled.tickMs < now - ttl) return expired(`the run of schedule "${scheduled.id}" was for tick`, scheduled.tickMs);
    if (job) return `its schedules job is ${job.state}, but no history was recorded: HISTORY was off on the worker that ran it`;
    return (
      `no run of schedule "${scheduled.id}" for tick ${new Date(scheduled.tickMs).toISOString()} is known ` +
      '(not one of its ticks, or run while HISTORY was off and its job since removed; ' +
      '`switchyard deliveries --event schedule` lists the runs kept)'
    );
  }
  const rerun = parseRerunJobId(ref);
  if (rerun) {
    return (
      `no attempt of this re-run of ${rerun.key} by handler "${rerun.handlerId}" is recorded: not run yet, ` +
      `run while HISTORY was off, or longer ago than HISTORY_TTL (${formatDuration(ttl)}); ` +
      `\`switchyard trace ${rerun.key}\` lists the re-runs kept`
    );
  }
  const key = parseJobId(ref)?.key ?? ref;
  const prefix = config.queuePrefix;
  const [receivedAt, indexed] = await Promise.all([
    redis.get(ingestKeys(prefix).dedupe(key)),
    redis.zscore(historyKeys(prefix).index, key),
  ]);
  const at = receivedAt !== null ? Date.parse(receivedAt) : indexed !== null ? Number(indexed) : Number.NaN;
  if (Number.isFinite(at) && (indexed !== null || at < now - ttl)) return expired('it was received', at);
  if (Number.isFinite(at) || job) {
    const when = Number.isFinite(at) ? ` ${new Date(at).toISOString()} (within HISTORY_TTL, ${formatDuration(ttl)})` : '';
    return (
      `it was received${when}, but no history was recorded: ` +
      'HISTORY was off on the workers when it was fanned out' +
      (job ? '' : ', or it is still in the inbox waiting for the pump')
    );
  }
  return (
    `no delivery with this key or job id is known (none received within DEDUPE_TTL, ${formatDuration(config.dedupeTtlMs)}; ` +
    "an older one's history has expired too; `switchyard deliveries` lists what is kept)"
  );
}
