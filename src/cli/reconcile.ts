import { CHANGE_KEY_EVENTS, hasChangeKey, type ChangeKeyEvent } from '../events/index.js';
import { ChangeClaims, fixedWorld, readWorld, worldAt, IngestStore } from '../queue/index.js';
import { formatReport, reconcile, reconcileClient, snapshotSource } from '../sources/index.js';
import { reconcileBurst } from '../clients/index.js';
import type { DestinationStream } from 'pino';
import { createLogger } from '../log/index.js';
import { parseCommandArgs, str, strs } from './args.js';
import { EXIT, UsageError, type CliIo, type Command, type ExitCode } from './command.js';
import type { Config } from '../config/index.js';
import type { RedisClient } from '../redis/index.js';
import { cliConfig, cliRedis } from './connect.js';
import { WORKSPACE_OPTION, eventFlags, timeFlag, workspaceHelp } from './flags.js';

const HELP = `Usage: switchyard reconcile --since AGE|DATE [--until AGE|DATE] [--events a,b] [--dry-run] [--json]

Never miss a change: the workspace gives up on a delivery after its retries, so
a receiver that was down longer loses those events. reconcile lists what changed
upstream in the window (contacts, conversations and their messages, leads),
infers the events it implies, and enqueues a delivery for each one that was
never received. Handlers see it with ctx.delivery.source === 'reconcile'.

A change is keyed by (event, record id, the record's own time): a second
reconcile, or the real delivery arriving late, runs no handler twice.
From the listings, by their time: contact.created, conversation.created,
conversation.closed, message.received, message.sent, lead.created, and
lead.won / lead.lost of leads created in the window.
From the snapshot the workers keep (SNAPSHOT_EVERY, for the events a loaded
handler subscribes to), whose records carry no time of the move:
conversation.opened, conversation.assigned, contact.lifecycle_changed, and
lead.won / lead.lost of older leads.

Spends at most RECONCILE_BUDGET (default 0.2) of WORKSPACE_API_BURST per 10 s,
at low priority. Needs WORKSPACE_API_URL, WORKSPACE_API_TOKEN and REDIS_URL
(and QUEUE_PREFIX) of your receivers and workers.

Options:
  --since AGE|DATE   window start: an age (2h, 30m, 1d) or a date/time (2025-03-04T10:00:00Z)
  --until AGE|DATE   window end (default now)
  --events a,b       only these events (default every inferable one)
  --dry-run          list what is missing; enqueue nothing
  --json             the report as JSON
${workspaceHelp(21)}
Examples:
  switchyard reconcile --since 6h --dry-run
  switchyard reconcile --since 2025-03-04T08:00:00Z --until 2025-03-04T12:00:00Z --events message.received
`;

/** The flags of `reconcile`, checked. */
interface ReconcileFlags {
  since: number;
  until: number;
  /** Undefined: every inferable event. */
  events: ChangeKeyEvent[] | undefined;
  dryRun: boolean;
  json: boolean;
  workspace: string | undefined;
}

/** The `reconcile` command line, checked (ages count back from `now`); undefined for `--help`. */
function parseReconcile(argv: readonly string[], now: number): ReconcileFlags | undefined {
  const { values } = parseCommandArgs(argv, {
    since: { type: 'string' },
    until: { type: 'string' },
    events: { type: 'string', multiple: true },
    event: { type: 'string', multiple: true },
    'dry-run': { type: 'boolean' },
    json: { type: 'boolean' },
    ...WORKSPACE_OPTION,
  });
  if (values.help) return undefined;
  const sinceText = str(values, 'since');
  if (sinceText === undefined)
    throw new UsageError('--since is required: an age such as 6h or a date or timestamp such as 2025-03-04T10:00:00Z');
  const since = timeFlag('since', sinceText, now);
  const untilText = str(values, 'until');
  const until = untilText === undefined ? now : timeFlag('until', untilText, now);
  if (until <= since)
    throw new UsageError(`--until (${new Date(until).toISOString()}) must be after --since (${new Date(since).toISOString()})`);
  const names = eventFlags([...strs(values, 'events'), ...strs(values, 'event')]);
  const unsupported = names.filter((n) => !hasChangeKey(n));
  if (unsupported.length > 0) {
    const why = 'not a webhook (the poller derives it from listings, and its next poll catches up)';
    throw new UsageError(`--events: ${unsupported.join(', ')} cannot be reconciled: ${why}; inferable: ${CHANGE_KEY_EVENTS.join(', ')}`);
  }
  const events = names.length > 0 ? (names as ChangeKeyEvent[]) : undefined;
  return { since, until, events, dryRun: values['dry-run'] === true, json: values.json === true, workspace: str(values, 'workspace') };
}

/** Refuses a window older than DEDUPE_TTL and a config without the workspace API; returns the API's URL. */
function checkReconcileConfig(config: Config, since: number, now: number): string {
  if (since < now - config.dedupeTtlMs) {
    const ttlHours = Math.round(config.dedupeTtlMs / 3_600_000);
    throw new UsageError(
      `--since ${new Date(since).toISOString()} reaches further back than DEDUPE_TTL (${ttlHours}h): ` +
        'changes received before then are no longer remembered, so their handlers would run again; ' +
        'choose a later --since, or raise DEDUPE_TTL first',
    );
  }
  if (!config.workspaceApiUrl || !config.workspaceApiToken)
    throw new UsageError('reconcile reads the workspace API: set WORKSPACE_API_URL and WORKSPACE_API_TOKEN (or WORKSPACES_FILE)');
  return config.workspaceApiUrl;
}

/** Reconciles the window against this Redis's claims and prints the report. */
async function reconcileWindow(f: ReconcileFlags, config: Config, apiUrl: string, redis: RedisClient, io: CliIo): Promise<ExitCode> {
  let calls = 0;
  const api = reconcileClient(config, redis, () => {
    calls++;
  });
  if (!api) return EXIT.failed;
  if (!f.json) {
    const budget = `RECONCILE_BUDGET ${config.reconcile.budget} of ${config.workspaceApiBurst}`;
    io.stderr.write(`reconcile: at most ${reconcileBurst(config)} API calls per 10 s (${budget}), low priority\n`);
  }
  // The world of the workers of this API (a fresh sandbox is a new one): claims of another world are not this one's.
  const world = await readWorld(redis, config.queuePrefix, apiUrl);
  const claims = new ChangeClaims(redis, config.queuePrefix, config.dedupeTtlMs, fixedWorld(world));
  const log = createLogger({ level: f.json ? 'warn' : 'info', destination: io.stderr as unknown as DestinationStream });
  const snapshot = snapshotSource({
    redis,
    prefix: config.queuePrefix,
    world: worldAt(world, null),
    api,
    log,
    claims,
    ttlMs: config.dedupeTtlMs,
    lockMs: 120_000,
  });
  const report = await reconcile({
    api,
    claims,
    snapshot,
    world: worldAt(world, null),
    sink: f.dryRun ? null : new IngestStore(redis, config.queuePrefix, config.dedupeTtlMs),
    window: { since: f.since, until: f.until },
    ...(f.events ? { events: f.events } : {}),
    apiCalls: () => calls,
  });
  io.stdout.write(f.json ? `${JSON.stringify(report)}\n` : formatReport(report));
  return EXIT.ok;
}

export const reconcileCommand: Command = {
  name: 'reconcile',
  help: HELP,
  async run(argv, io) {
    const now = Date.now();
    const f = parseReconcile(argv, now);
    if (!f) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    const config = cliConfig(io, f.workspace);
    const apiUrl = checkReconcileConfig(config, f.since, now);
    const needsRedis =
      'reconcile needs REDIS_URL (and QUEUE_PREFIX when not "switchyard") of your receivers and workers, ' +
      'or a running `npm run dev` / `switchyard start` with its managed Redis';
    const redis = await cliRedis(config, needsRedis, io.cwd);
    try {
      return await reconcileWindow(f, config, apiUrl, redis, io);
    } finally {
      redis.disconnect();
    }
  },
};
