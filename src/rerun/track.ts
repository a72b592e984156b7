import { BATCH_KEEP_MS, itemJobId, rerunKeys } from './keys.js';
import { decodeItem } from './batch.js';
import { RERUN_SCRIPTS } from './scripts.js';
import type { FeedContext } from './context.js';
import type { BatchState } from './batch.js';

/**
 * Looks at the runs of a batch still open (added, not ended) and records each that ended: completed
 * (`done`), failed for good (`failed:<reason>`, its dead letter in `dlq list`), or, once the batch is
 * cancelling, removed before it started (`cancelled`; a running one is left to finish). Ends the batch
 * when nothing is open and nothing is left to feed. Any process may run it, any number of times.
 */
export async function trackBatch(ctx: Pick<FeedContext, 'redis' | 'prefix' | 'queue' | 'now'>, batch: string): Promise<BatchState | null> {
  const keys = rerunKeys(ctx.prefix);
  const [[, meta], [, open]] = (await ctx.redis.multi().hmget(keys.meta(batch), 'state', 'handler').smembers(keys.open(batch)).exec()) as [
    [Error | null, (string | null)[]],
    [Error | null, string[]],
  ];
  const [state, handler] = meta;
  if (!state) return null;
  const outcomes = await endedRuns(ctx, batch, await openJobs(ctx, batch, open, handler ?? ''), state === 'cancelling');
  const calls = RERUN_SCRIPTS.on(ctx.redis);
  const now = (ctx.now ?? Date.now)();
  const after = await calls.rerunEnd(
    [keys.meta(batch), keys.items(batch), keys.open(batch), keys.ended(batch), keys.running],
    [now, BATCH_KEEP_MS, batch, ...outcomes.flat()],
  );
  return after as BatchState;
}

/** The job ids of the open items (from the frozen list: each item's key, and the batch's handler). */
async function openJobs(
  ctx: Pick<FeedContext, 'redis' | 'prefix'>,
  batch: string,
  open: readonly string[],
  handler: string,
): Promise<{ idx: string; id: string }[]> {
  if (open.length === 0) return [];
  const items = rerunKeys(ctx.prefix).items(batch);
  const p = ctx.redis.pipeline();
  for (const idx of open) p.lindex(items, Number(idx));
  const rows = (await p.exec()) ?? [];
  return open.map((idx, i) => {
    const raw = rows[i]?.[1];
    return { idx, id: typeof raw === 'string' ? itemJobId(batch, Number(idx), decodeItem(raw).key, handler) : '' };
  });
}

/** The open runs that ended, as [index, outcome] pairs. */
async function endedRuns(
  ctx: Pick<FeedContext, 'redis' | 'queue'>,
  batch: string,
  open: readonly { idx: string; id: string }[],
  cancelling: boolean,
): Promise<[string, string][]> {
  if (open.length === 0) return [];
  const { queue } = ctx;
  const completed = queue.toKey('completed');
  const failed = queue.toKey('failed');
  const p = ctx.redis.pipeline();
  for (const { id } of open) p.zscore(completed, id).zscore(failed, id).hget(queue.toKey(id), 'failedReason').exists(queue.toKey(id));
  const rows = (await p.exec()) ?? [];
  const out: [string, string][] = [];
  for (let i = 0; i < open.length; i++) {
    const { idx, id } = open[i] as { idx: string; id: string };
    const [done, dead, reason, exists] = [0, 1, 2, 3].map((k) => rows[4 * i + k]?.[1]);
    if (done !== null && done !== undefined) out.push([idx, 'done']);
    else if (dead !== null && dead !== undefined) out.push([idx, `failed:${typeof reason === 'string' && reason ? reason : 'failed'}`]);
    else if (exists === 0) out.push([idx, cancelling ? 'cancelled' : 'failed:its job was removed before it ended']);
    else if (cancelling && (await queue.remove(id)) === 1) out.push([idx, 'cancelled']);
  }
  return out;
}
