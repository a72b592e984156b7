import { randomUUID } from 'node:crypto';
import type { ApiClient, Paginator } from '../../api/index.js';
import type { DerivedEventName } from '../../events/index.js';
import type { Handler } from '../../handler/index.js';
import type { Logger } from '../../log/index.js';
import type { IngestStore } from '../../queue/index.js';
import type { RedisClient } from '../../redis/index.js';
import {
  decodeSeen,
  derivedDelivery,
  diffOrders,
  diffTasks,
  encodeSeen,
  SETTLED_ORDER_STATUSES,
  type DerivedEvent,
  type SeenOrder,
} from './diff.js';

/**
 * The poller of derived events: one poll per tick across every worker process
 * (a BullMQ job scheduler on the `polls` queue, see src/sources/poll/poll-timer.ts),
 * guarded by a lock so a slow poll never overlaps the next one. Its cursor
 * and snapshot live in Redis under the queue prefix; each change becomes a
 * delivery with a deterministic key put through the ingest script (dedupe by
 * key), so a repeated poll adds nothing and fan-out treats it like a webhook.
 */

/**
 * `GET /orders?since=` asks this far behind the cursor: a write committed late with an earlier `updated_at` is still seen
 * (the snapshot drops repeats).
 */
export const ORDER_OVERLAP_MS = 60_000;
/**
 * An order in a settled status (delivered, cancelled, returned) is forgotten once its `updated_at` is this far
 * behind the listing's `since`: it is listed again only when it changes, and then its previous status is known
 * (see diffOrders). Keeps the snapshot to the orders still moving.
 */
export const SETTLED_ORDER_FORGET_MS = 3_600_000;
/** Most settled orders forgotten per poll. */
const FORGET_BATCH = 1_000;
/** Most pages one listing reads in one poll (100 records each). */
const MAX_PAGES = 200;
const EPOCH = '1970-01-01T00:00:00.000Z';

/**
 * Redis keys of the poller, under the queue prefix; a world's own
 * (src/queue/world.ts: a fresh sandbox's orders are not the last one's, so
 * its poller takes a baseline of its own). The lock is shared.
 */
export function pollKeys(prefix: string, world: string | null = null) {
  const at = world === null ? `${prefix}:poll` : `${prefix}:poll:@${world}`;
  return {
    lock: `${prefix}:poll:lock`,
    /** Latest `updated_at` seen in `GET /orders`; absent until the first poll took its baseline. */
    ordersCursor: `${at}:orders:cursor`,
    /** Hash: order id → `status|updated_at` as last seen. */
    ordersSeen: `${at}:orders:seen`,
    /** Sorted set: ids of the orders in `ordersSeen` with a settled status, by `updated_at` (ms): forgotten once old. */
    ordersSettled: `${at}:orders:settled`,
    /** Hash: task id → the due_at it was announced with (the open tasks due now). */
    tasksSeen: `${at}:tasks:seen`,
    /** Set once the first task poll took its baseline. */
    tasksBaseline: `${at}:tasks:baseline`,
    /** The API's clock minus ours (ms), from the `Date` header of its answers. */
    clockOffset: `${at}:clock-offset`,
    /** Base of the snapshot of event fields (src/sources/poll/snapshot-store.ts), this world's own. */
    snapshot: at,
    /** The snapshot's refresh lock, apart from the poll's: a long refresh never skips a poll. */
    snapshotLock: `${prefix}:poll:snapshot:lock`,
  };
}

/** The derived events some handler subscribes to (the poller runs only when there is one). */
export function derivedSubscriptions(handlers: readonly Handler[]): Set<DerivedEventName> {
  const out = new Set<DerivedEventName>();
  for (const h of handlers) for (const n of h.on) if (n === 'order.created' || n === 'order.status_changed' || n === 'task.due') out.add(n);
  return out;
}

export interface PollerDeps {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly ingest: Pick<IngestStore, 'put'>;
  /** The API client the poller reads with (priority low: polling yields to handlers). */
  readonly api: () => Pick<ApiClient, 'orders' | 'tasks'>;
  readonly log: Logger;
  /** `task.due` fires this long before due_at. */
  readonly taskLookaheadMs: number;
  /** Longest a poll may hold the lock. */
  readonly lockMs: number;
  readonly now?: () => number;
  /** The world this poll reads (src/queue/world.ts); null or absent: a real workspace. */
  readonly world?: string | null;
}

export interface PollReport {
  /** False when another worker's poll still held the lock (this tick did nothing). */
  readonly ran: boolean;
  readonly orders?: { readonly baseline: boolean; readonly seen: number; readonly events: number; readonly accepted: number };
  readonly tasks?: { readonly baseline: boolean; readonly seen: number; readonly events: number; readonly accepted: number };
}

const RELEASE = 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0';

/** One poll of the listings the subscriptions in `wanted` need. */
export async function pollOnce(deps: PollerDeps, wanted: ReadonlySet<DerivedEventName>): Promise<PollReport> {
  const keys = pollKeys(deps.prefix, deps.world ?? null);
  const token = randomUUID();
  if ((await deps.redis.set(keys.lock, token, 'PX', deps.lockMs, 'NX')) !== 'OK') return { ran: false };
  try {
    const report: { ran: true; orders?: PollReport['orders']; tasks?: PollReport['tasks'] } = { ran: true };
    if (wanted.has('order.created') || wanted.has('order.status_changed')) report.orders = await pollOrders(deps, wanted);
    if (wanted.has('task.due')) report.tasks = await pollTasks(deps);
    return report;
  } finally {
    await deps.redis.eval(RELEASE, 1, keys.lock, token);
  }
}

/** Every record of a listing, page by page, noting the API's clock from each answer's `Date` header. */
async function listAll<T>(deps: PollerDeps, list: (cursor: string | undefined) => Paginator<T>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const r = await list(cursor).firstPage().withResponse();
    const date = Date.parse(r.headers.get('date') ?? '');
    if (Number.isFinite(date))
      await deps.redis.set(pollKeys(deps.prefix, deps.world ?? null).clockOffset, String(date - (deps.now ?? Date.now)()));
    out.push(...r.data.data);
    if (!r.data.nextCursor) break;
    cursor = r.data.nextCursor;
  }
  return out;
}

async function ingestAll(deps: PollerDeps, events: readonly DerivedEvent[]): Promise<number> {
  const at = new Date((deps.now ?? Date.now)()).toISOString();
  // Put in one turn, oldest first: one ingest script run, in this order in the inbox.
  const outcomes = await Promise.all(events.map((e) => deps.ingest.put(derivedDelivery(e, at, deps.world ?? null))));
  return outcomes.filter((o) => o === 'accepted').length;
}

async function pollOrders(deps: PollerDeps, wanted: ReadonlySet<DerivedEventName>): Promise<NonNullable<PollReport['orders']>> {
  const keys = pollKeys(deps.prefix, deps.world ?? null);
  const api = deps.api();
  const cursor = await deps.redis.get(keys.ordersCursor);
  const since = cursor === null ? undefined : new Date(Date.parse(cursor) - ORDER_OVERLAP_MS).toISOString();
  const page = await listAll(deps, (c) => api.orders.list({ per_page: 100, ...(since ? { since } : {}), ...(c ? { cursor: c } : {}) }));
  if (cursor === null) {
    // First poll: what exists now is the baseline, not news.
    const seen = new Map<number, SeenOrder>();
    for (const o of page) seen.set(o.id, { status: o.status, updatedAt: o.updated_at });
    await writeSeen(deps.redis, keys, seen);
    const latest = page.reduce((m, o) => (Date.parse(o.updated_at) > Date.parse(m) ? o.updated_at : m), EPOCH);
    await deps.redis.set(keys.ordersCursor, latest);
    deps.log.info({ orders: page.length }, 'poller: orders baseline taken; changes from now on become events');
    return { baseline: true, seen: page.length, events: 0, accepted: 0 };
  }
  const ids = [...new Set(page.map((o) => o.id))];
  const stored = ids.length ? await deps.redis.hmget(keys.ordersSeen, ...ids.map(String)) : [];
  const seen = new Map(ids.map((id, i) => [id, decodeSeen(stored[i])]));
  const diff = diffOrders(seen, page, wanted, since);
  // Deliveries first, memory after: a crash in between repeats the same keys, which ingest absorbs.
  const accepted = await ingestAll(deps, diff.events);
  await writeSeen(deps.redis, keys, diff.seen);
  if (diff.cursor !== undefined && Date.parse(diff.cursor) > Date.parse(cursor)) await deps.redis.set(keys.ordersCursor, diff.cursor);
  if (diff.events.length) deps.log.info({ events: diff.events.length, accepted }, 'poller: order changes');
  if (diff.unknown.length) {
    const untrackedOrders =
      'poller: open orders created before the last poll were not in its snapshot (baseline cut at its page limit, or the snapshot lost); ' +
      'their status is tracked from now on, an earlier change is not inferred';
    deps.log.warn({ orders: diff.unknown.slice(0, 20), count: diff.unknown.length }, untrackedOrders);
  }
  await forgetSettled(deps.redis, keys, Date.parse(since as string) - SETTLED_ORDER_FORGET_MS);
  return { baseline: false, seen: page.length, events: diff.events.length, accepted };
}

async function writeSeen(redis: RedisClient, keys: ReturnType<typeof pollKeys>, seen: ReadonlyMap<number, SeenOrder>): Promise<void> {
  if (seen.size === 0) return;
  const tx = redis.multi().hset(keys.ordersSeen, Object.fromEntries([...seen].map(([id, s]) => [String(id), encodeSeen(s)])));
  const settled = [...seen]
    .filter(([, s]) => SETTLED_ORDER_STATUSES.includes(s.status))
    .flatMap(([id, s]) => [Date.parse(s.updatedAt), String(id)]);
  if (settled.length) tx.zadd(keys.ordersSettled, ...settled);
  await tx.exec();
}

/** Forgets settled orders last updated before `before` (ms), a batch per poll. */
async function forgetSettled(redis: RedisClient, keys: ReturnType<typeof pollKeys>, before: number): Promise<void> {
  const ids = await redis.zrangebyscore(keys.ordersSettled, '-inf', `(${before}`, 'LIMIT', 0, FORGET_BATCH);
  if (ids.length === 0) return;
  await redis
    .multi()
    .hdel(keys.ordersSeen, ...ids)
    .zrem(keys.ordersSettled, ...ids)
    .exec();
}

async function pollTasks(deps: PollerDeps): Promise<NonNullable<PollReport['tasks']>> {
  const keys = pollKeys(deps.prefix, deps.world ?? null);
  const api = deps.api();
  // "Now" on the API's clock (its last Date header), so a workspace clock ahead of or behind ours does not shift task.due.
  const offset = Number(await deps.redis.get(keys.clockOffset)) || 0;
  const dueBefore = new Date((deps.now ?? Date.now)() + offset + deps.taskLookaheadMs).toISOString();
  const page = await listAll(deps, (c) =>
    api.tasks.list({ status: 'open', due_before: dueBefore, per_page: 100, ...(c ? { cursor: c } : {}) }),
  );
  const baseline = (await deps.redis.get(keys.tasksBaseline)) === null;
  const raw = await deps.redis.hgetall(keys.tasksSeen);
  const seen = new Map(Object.entries(raw).map(([id, due]) => [Number(id), due]));
  const diff = diffTasks(seen, page);
  const events = baseline ? [] : diff.events;
  const accepted = await ingestAll(deps, events);
  const tx = deps.redis.multi().del(keys.tasksSeen);
  if (diff.seen.size) tx.hset(keys.tasksSeen, Object.fromEntries([...diff.seen].map(([id, due]) => [String(id), due])));
  tx.set(keys.tasksBaseline, '1');
  await tx.exec();
  if (baseline) deps.log.info({ tasks: page.length }, 'poller: tasks baseline taken; tasks falling due from now on become events');
  else if (events.length) deps.log.info({ events: events.length, accepted }, 'poller: tasks due');
  return { baseline, seen: page.length, events: events.length, accepted };
}
