import { Queue } from 'bullmq';
import {
  EVENTS_QUEUE,
  SCHEDULES_QUEUE,
  isHandlerQueue,
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
import { printable as p } from '../util/index.js';
import { EXIT, UsageError, type CliIo, type ExitCode } from './command.js';
import type { Config } from '../config/index.js';
import { cliConfig, cliRedis } from './connect.js';
import { unknownHandler } from './dlq-handler.js';
import { details, table } from './dlq-print.js';

// The subcommands of `switchyard dlq` (dlq.ts parses the command line), each on the
// queues of the project's Redis.

/** A parsed `dlq` command line. */
export interface DlqRequest {
  io: CliIo;
  sub: 'list' | 'show' | 'retry' | 'purge' | 'resume';
  /** `show`'s job id or delivery key. */
  target: string | undefined;
  filter: DeadFilter;
  json: boolean;
  /** `purge --all`. */
  all: boolean;
  /** `--workspace`: whose queues. */
  workspace: string | undefined;
}

async function withQueues<T>(r: DlqRequest, fn: (q: DlqQueues, config: Config) => Promise<T>): Promise<T> {
  const io = r.io;
  const config = cliConfig(io, r.workspace);
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

/** Nothing matched a `--handler` that names no handler: said on stderr (with a did-you-mean), exit 1, not "0 jobs". */
async function refused(r: DlqRequest, matched: readonly DeadEntry[], q: DlqQueues, config: Config): Promise<boolean> {
  if (r.filter.handler === undefined || matched.length > 0) return false;
  const why = await unknownHandler(r.filter.handler, q, config);
  if (why) r.io.stderr.write(`dlq ${r.sub}: ${why}\n`);
  return why !== null;
}

function dlqList(r: DlqRequest): Promise<ExitCode> {
  const out = (s: string) => r.io.stdout.write(s);
  return withQueues(r, async (q, config) => {
    const [entries, pause] = await Promise.all([listDead(q, r.filter), pauseStatus(q)]);
    if (await refused(r, entries, q, config)) return EXIT.failed;
    if (r.json) out(`${JSON.stringify({ paused: pause.paused, pauseReason: pause.record?.reason ?? null, entries })}\n`);
    else {
      if (pause.paused) {
        const pausedSince = pause.record ? ` since ${p(pause.record.at)}: ${p(pause.record.reason)}` : '';
        out(`handlers queue is PAUSED${pausedSince}\n  (fix the token, then \`switchyard dlq resume\`)\n`);
      }
      out(table(entries));
    }
    return EXIT.ok;
  });
}

function dlqShow(r: DlqRequest): Promise<ExitCode> {
  const target = r.target as string;
  return withQueues(r, async (q) => {
    const found = await showDead(q, target);
    if (found.length === 0) {
      r.io.stderr.write(`dlq show: no dead-lettered job with id or delivery key "${p(target)}" (see \`switchyard dlq list\`)\n`);
      return EXIT.failed;
    }
    if (r.json) r.io.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
    else for (const d of found) r.io.stdout.write(details(d));
    return EXIT.ok;
  });
}

function dlqRetry(r: DlqRequest): Promise<ExitCode> {
  const out = (s: string) => r.io.stdout.write(s);
  return withQueues(r, async (q, config) => {
    const done = await retryDead(q, r.filter);
    if (await refused(r, done, q, config)) return EXIT.failed;
    const pause = await pauseStatus(q);
    if (r.json) out(`${JSON.stringify({ retried: done.length, entries: done })}\n`);
    else {
      for (const e of done) out(`retried ${p(e.id)}\n`);
      out(`${done.length} job${done.length === 1 ? '' : 's'} moved back to waiting\n`);
      if (pause.paused && done.some((e) => isHandlerQueue(e.queue)))
        out('note: the handlers queue is paused; nothing runs until `switchyard dlq resume`\n');
    }
    return EXIT.ok;
  });
}

async function dlqPurge(r: DlqRequest): Promise<ExitCode> {
  const filtered = Object.keys(r.filter).length > 0;
  if (!filtered && !r.all)
    throw new UsageError(
      'purge deletes jobs for good: give a filter (--queue, --event, --handler, --reason, --since, --older-than) or --all',
    );
  return withQueues(r, async (q, config) => {
    const done = await purgeDead(q, r.filter);
    if (await refused(r, done, q, config)) return EXIT.failed;
    r.io.stdout.write(
      r.json
        ? `${JSON.stringify({ purged: done.length, entries: done })}\n`
        : `${done.length} dead job${done.length === 1 ? '' : 's'} deleted\n`,
    );
    return EXIT.ok;
  });
}

function dlqResume(r: DlqRequest): Promise<ExitCode> {
  return withQueues(r, async (q) => {
    const res = await resumeDead(q);
    if (r.json) r.io.stdout.write(`${JSON.stringify({ resumed: res.wasPaused, was: res.record })}\n`);
    else
      r.io.stdout.write(
        res.wasPaused
          ? `handlers queue resumed${res.record ? ` (was paused since ${p(res.record.at)}: ${p(res.record.reason)})` : ''}\n`
          : 'handlers queue was not paused\n',
      );
    return EXIT.ok;
  });
}

/** Each subcommand's action. */
export const DLQ_SUBCOMMANDS: Record<DlqRequest['sub'], (r: DlqRequest) => Promise<ExitCode>> = {
  list: dlqList,
  show: dlqShow,
  retry: dlqRetry,
  purge: dlqPurge,
  resume: dlqResume,
};
