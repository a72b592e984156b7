import { jobIdFor } from '../events/index.js';
import type { Handler } from '../handler/index.js';
import { handlerJobOptions, type HandlerJobData } from '../queue/index.js';
import { decodeItem } from './batch.js';
import { eventOfBody } from './bodies.js';
import type { FeedContext } from './context.js';
import { itemJobId, rerunKeys, rerunRunId } from './keys.js';
import { RERUN_SCRIPTS } from './scripts.js';
import type { RerunItem } from './selection.js';

/** BullMQ priority of a re-run in `handlers-low`: after the queue's unprioritized runs (reconciled deliveries). */
export const RERUN_JOB_PRIORITY = 1_000;

/** A run to add, or why an item cannot run. */
type Fed =
  { index: number; job: { name: string; data: HandlerJobData; opts: Record<string, unknown> } } | { index: number; reason: string };

/**
 * Adds the next items of a running batch to the queue, up to its window of open runs, then records
 * the feed (src/rerun/lua/rerunAdvance-3.lua). The jobs go first, with ids of their own
 * (`r/<key>/<handler>/<batch>.<index>`): a feed repeated after a crash between the two adds nothing, and a run is never
 * skipped. An item that cannot run (its body not kept any more, no longer a valid event, its handler
 * not loaded or not subscribed) ends as failed, with why. Returns how many runs it added.
 */
export async function feedBatch(ctx: FeedContext, batch: string): Promise<number> {
  const keys = rerunKeys(ctx.prefix);
  const [[, meta], [, open]] = (await ctx.redis
    .multi()
    .hmget(keys.meta(batch), 'state', 'next', 'total', 'handler')
    .scard(keys.open(batch))
    .exec()) as [[Error | null, (string | null)[]], [Error | null, number]];
  const [state, nextRaw, totalRaw, handlerId] = meta;
  const next = Number(nextRaw);
  const room = Math.min(ctx.window - open, Number(totalRaw) - next);
  if (state !== 'running' || room <= 0) return 0;
  const raw = await ctx.redis.lrange(keys.items(batch), next, next + room - 1);
  const items = raw.map(decodeItem);
  const handler = ctx.handlers().find((h) => h.id === handlerId);
  const bodies = await ctx.bodies(items.map((i) => i.key));
  const fed = items.map((item, i) => feedItem(batch, next + i, item, handler, handlerId ?? '', bodies.get(item.key)));
  const jobs = fed.flatMap((f) => ('job' in f ? [f.job] : []));
  if (jobs.length > 0) await ctx.queue.addBulk(jobs);
  const calls = RERUN_SCRIPTS.on(ctx.redis);
  const added = fed.filter((f) => 'job' in f).map((f) => f.index);
  const notFed = fed.flatMap((f) => ('reason' in f ? [f.index, f.reason] : []));
  const recorded = await calls.rerunAdvance(
    [keys.meta(batch), keys.open(batch), keys.ended(batch)],
    [next, next + items.length, added.length, ...added, ...notFed],
  );
  if (recorded === 1) return jobs.length;
  // Another feeder recorded this feed first (the same jobs: nothing doubled), or the batch ended meanwhile.
  const now = await ctx.redis.hmget(keys.meta(batch), 'state', 'next');
  if (now[0] === 'running' || now[0] === 'cancelling') return 0;
  await Promise.all(added.map((i) => ctx.queue.remove(itemJobId(batch, i, items[i - next]?.key ?? '', handlerId ?? '')).catch(() => 0)));
  ctx.log?.warn({ batch, removed: added.length }, 'rerun batch ended while it was fed: the runs just added were removed');
  return 0;
}

function feedItem(
  batch: string,
  index: number,
  item: RerunItem,
  handler: Handler | undefined,
  handlerId: string,
  body: Buffer | undefined,
): Fed {
  if (!handler) return { index, reason: `handler "${handlerId}" is not loaded by the worker that fed the batch` };
  if (!body) return { index, reason: 'its body is not kept any more' };
  const r = eventOfBody(body);
  if (!r.ok) return { index, reason: r.reason };
  if (!(handler.on as readonly string[]).includes(r.event.name)) {
    return { index, reason: `handler "${handler.id}" no longer handles ${r.event.name}` };
  }
  const { event } = r;
  const data: HandlerJobData = {
    key: item.key,
    handlerId: handler.id,
    receivedAt: item.receivedAt ?? new Date().toISOString(),
    event: { id: event.id, name: event.name, createdAt: event.createdAt, data: event.data },
    rerun: { id: rerunRunId(batch, index), of: jobIdFor(item.key, handler.id), batch },
  };
  const opts = { ...handlerJobOptions(handler.retry), jobId: itemJobId(batch, index, item.key, handler.id), priority: RERUN_JOB_PRIORITY };
  return { index, job: { name: handler.id, data, opts } };
}
