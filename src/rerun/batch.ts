import type { RerunDeps } from './deps.js';
import { BATCH_ID, newBatchId, rerunKeys } from './keys.js';
import { planRerun, type RerunPlan } from './plan.js';
import type { RerunItem, RerunSelection } from './selection.js';

/** Where a batch stands: fed and tracked (`running`), cancelled with runs still going (`cancelling`), or ended. */
export type BatchState = 'running' | 'cancelling' | 'cancelled' | 'done';

/** What `startRerun` made. */
export interface StartedRerun {
  readonly batch: string;
  readonly handler: string;
  readonly total: number;
  readonly plan: RerunPlan;
}

/** The batch is not known (never started, or expired a week after it ended). */
export class UnknownBatchError extends Error {
  readonly code = 'rerun_unknown_batch';
  constructor(batch: string) {
    super(
      BATCH_ID.test(batch)
        ? `no rerun batch "${batch}" (unknown, or ended more than 7 days ago); \`switchyard rerun status\` lists the batches kept`
        : `"${batch}" is not a rerun batch id (they look like rr-mb2x9k1c-4f7a); \`switchyard rerun status\` lists them`,
    );
    this.name = 'UnknownBatchError';
  }
}

/** The form an item is kept in, in the batch's frozen list. */
export const encodeItem = (i: RerunItem): string => JSON.stringify({ k: i.key, e: i.event, r: i.receivedAt });
export function decodeItem(raw: string): RerunItem {
  const o = JSON.parse(raw) as { k: string; e: string; r: string | null };
  return { key: o.k, event: o.e, receivedAt: o.r };
}

/**
 * Starts a batch: its selection (a plan's items, or the selection planned now) is frozen in Redis, then
 * the workers' feeders (src/rerun/feed.ts) add its runs to the `handlers-low` queue a window at a time,
 * each with a job id of its own, and record how each ended. Nothing else is needed of the caller: the
 * batch goes on when it exits.
 */
export async function startRerun(deps: RerunDeps, what: RerunPlan | RerunSelection): Promise<StartedRerun> {
  const plan = 'items' in what ? what : await planRerun(deps, what);
  if (!deps.handlers.some((h) => h.id === plan.handler)) {
    throw new Error(`no handler "${plan.handler}" in this project: the plan was made with other handlers`);
  }
  const now = (deps.now ?? Date.now)();
  const batch = newBatchId(now);
  const keys = rerunKeys(deps.prefix);
  const m = deps.redis.multi();
  for (let i = 0; i < plan.items.length; i += 1_000) m.rpush(keys.items(batch), ...plan.items.slice(i, i + 1_000).map(encodeItem));
  m.hset(keys.meta(batch), {
    handler: plan.handler,
    selection: JSON.stringify(plan.selection),
    total: plan.items.length,
    next: 0,
    done: 0,
    failed: 0,
    cancelled: 0,
    calls: plan.calls,
    estimatedMs: plan.estimatedMs,
    createdAt: now,
    by: deps.by ?? '',
    state: plan.items.length === 0 ? 'done' : 'running',
    ...(plan.items.length === 0 ? { endedAt: now } : {}),
  });
  m.zadd(keys.batches, now, batch);
  if (plan.items.length > 0) m.sadd(keys.running, batch);
  await m.exec();
  return { batch, handler: plan.handler, total: plan.items.length, plan };
}

/** One batch as `rerun status` shows it. */
export interface RerunStatus {
  readonly batch: string;
  readonly handler: string;
  readonly state: BatchState;
  readonly selection: RerunSelection;
  readonly total: number;
  /** Items added to the queue so far (or ended without being added). */
  readonly fed: number;
  readonly done: number;
  readonly failed: number;
  /** Runs removed by a cancel before they started. */
  readonly cancelled: number;
  /** Runs added and not ended yet (waiting, running, retrying, parked). */
  readonly open: number;
  readonly createdAt: string;
  readonly endedAt: string | null;
  readonly by: string;
  readonly cancelledBy: string | null;
  /** How much longer, from the pace so far (or the plan's estimate before the first run ended); null once ended. */
  readonly etaMs: number | null;
  /** The plan's estimate of the API calls. */
  readonly calls: number;
}

const num = (v: string | undefined): number => (v === undefined ? 0 : Number(v) || 0);

/** A batch's progress; throws UnknownBatchError for a batch not kept. */
export async function rerunStatus(deps: Pick<RerunDeps, 'redis' | 'prefix' | 'now'>, batch: string): Promise<RerunStatus> {
  const keys = rerunKeys(deps.prefix);
  if (!BATCH_ID.test(batch)) throw new UnknownBatchError(batch);
  const [[, h], [, open]] = (await deps.redis.multi().hgetall(keys.meta(batch)).scard(keys.open(batch)).exec()) as [
    [Error | null, Record<string, string>],
    [Error | null, number],
  ];
  if (!h || Object.keys(h).length === 0) throw new UnknownBatchError(batch);
  return statusOf(batch, h, open, (deps.now ?? Date.now)());
}

function statusOf(batch: string, h: Record<string, string>, open: number, now: number): RerunStatus {
  const total = num(h['total']);
  const done = num(h['done']);
  const failed = num(h['failed']);
  const cancelled = num(h['cancelled']);
  const createdAt = num(h['createdAt']);
  const state = (h['state'] ?? 'running') as BatchState;
  const ended = done + failed;
  const left = total - ended - cancelled;
  let etaMs: number | null = null;
  if (state === 'running' || state === 'cancelling') {
    const elapsed = Math.max(1, now - createdAt);
    etaMs = state === 'cancelling' ? null : ended > 0 ? Math.round((elapsed / ended) * left) : Math.max(0, num(h['estimatedMs']) - elapsed);
  }
  return {
    batch,
    handler: h['handler'] ?? '',
    state,
    selection: JSON.parse(h['selection'] ?? '{}') as RerunSelection,
    total,
    fed: num(h['next']),
    done,
    failed,
    cancelled,
    open,
    createdAt: new Date(createdAt).toISOString(),
    endedAt: h['endedAt'] ? new Date(num(h['endedAt'])).toISOString() : null,
    by: h['by'] ?? '',
    cancelledBy: h['cancelledBy'] ?? null,
    etaMs,
    calls: num(h['calls']),
  };
}

/** The batches kept, newest first (at most `limit`, default 20). */
export async function listReruns(deps: Pick<RerunDeps, 'redis' | 'prefix' | 'now'>, limit = 20): Promise<RerunStatus[]> {
  const keys = rerunKeys(deps.prefix);
  const ids = await deps.redis.zrevrange(keys.batches, 0, limit - 1);
  const p = deps.redis.pipeline();
  for (const id of ids) p.hgetall(keys.meta(id)).scard(keys.open(id));
  const rows = (await p.exec()) ?? [];
  const now = (deps.now ?? Date.now)();
  const out: RerunStatus[] = [];
  const gone: string[] = [];
  ids.forEach((id, i) => {
    const h = rows[2 * i]?.[1] as Record<string, string> | undefined;
    if (!h || Object.keys(h).length === 0) gone.push(id);
    else out.push(statusOf(id, h, Number(rows[2 * i + 1]?.[1] ?? 0), now));
  });
  // Batches whose keys expired leave the list.
  if (gone.length > 0) await deps.redis.zrem(keys.batches, ...gone);
  return out;
}

/** The failed runs of a batch (at most `limit`): item, delivery key and why. */
export async function rerunFailures(
  deps: Pick<RerunDeps, 'redis' | 'prefix'>,
  batch: string,
  limit = 20,
): Promise<{ index: number; key: string; reason: string }[]> {
  const keys = rerunKeys(deps.prefix);
  const ended = await deps.redis.hgetall(keys.ended(batch));
  const failed = Object.entries(ended)
    .filter(([, v]) => v.startsWith('failed:'))
    .map(([i, v]) => ({ index: Number(i), reason: v.slice('failed:'.length) }))
    .sort((a, b) => a.index - b.index)
    .slice(0, limit);
  const p = deps.redis.pipeline();
  for (const f of failed) p.lindex(keys.items(batch), f.index);
  const rows = (await p.exec()) ?? [];
  return failed.map((f, i) => {
    const raw = rows[i]?.[1];
    return { ...f, key: typeof raw === 'string' ? decodeItem(raw).key : '?' };
  });
}
