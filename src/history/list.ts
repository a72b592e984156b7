import { matchesWhere, parseEnvelope, type WhereQuery } from '../events/index.js';
import type { RedisClient } from '../redis/index.js';
import { KeptBodyError, readKeptBodies } from './bodies.js';
import { historyKeys } from './keys.js';
import { summaryOf, type DeliverySummary } from './read.js';
import { indexPages } from './scan.js';

/** Every criterion given must hold. */
export interface DeliveryFilter {
  readonly event?: string;
  readonly conversation?: string;
  readonly contact?: string;
  /** A handler subscribed to it. */
  readonly handler?: string;
  /**
   * A handler's latest state (with `handler`: that handler's), or the delivery's state (`invalid`, `no_handlers`);
   * `pending`: placed, not yet run.
   */
  readonly outcome?: string;
  /** Received at or after (epoch ms). */
  readonly since?: number;
  /**
   * Content conditions (`--where`, src/events/where.ts), matched against each delivery's kept body (KEEP_BODIES):
   * only deliveries of the query's events are considered, and one of those without a kept body cannot match
   * (counted in `withoutBody`).
   */
  readonly where?: WhereQuery;
  /** Most listed (default 50). */
  readonly limit?: number;
  /**
   * Most index entries read before giving up (default 20 000; with `where`, no limit: a content query reads the
   * whole window unless `limit` is reached first, a page at a time).
   */
  readonly scanMax?: number;
}

/** What a listing read: index entries, deliveries it could not match for want of a kept body (or an unreadable one). */
export interface ScanStats {
  scanned: number;
  /** With `where`: deliveries of the query's events (and the other filters) whose body is not kept (expired, or KEEP_BODIES=0 then). */
  withoutBody: number;
  /** With `where`: kept bodies that could not be read back (another version's form, or damaged). */
  unreadable: number;
  /** The scan stopped at `scanMax` with more left. */
  capped: boolean;
}

/** A listing: the deliveries, newest first, and what was read to find them; `more` when it stopped before the end. */
export interface DeliveryListing extends ScanStats {
  readonly deliveries: DeliverySummary[];
  readonly more: boolean;
}

/** The states a run has before it ran (its placement by fan-out). */
export const PENDING_STATES: readonly string[] = ['queued', 'ordered', 'waiting', 'debounced', 'folded', 'repeat'];

function matches(s: DeliverySummary, f: DeliveryFilter): boolean {
  if (f.event !== undefined && s.event !== f.event) return false;
  if (f.conversation !== undefined && s.conversation !== f.conversation) return false;
  if (f.contact !== undefined && s.contact !== f.contact) return false;
  if (f.handler !== undefined && !(f.handler in s.handlers)) return false;
  if (f.outcome !== undefined) {
    const states =
      f.handler !== undefined ? [s.handlers[f.handler] as string] : [...Object.values(s.handlers), ...(s.state ? [s.state] : [])];
    const ok = f.outcome === 'pending' ? states.some((x) => PENDING_STATES.includes(x)) : states.includes(f.outcome);
    if (!ok) return false;
  }
  if (f.where && (s.state === 'invalid' || s.event === null || !(f.where.events as readonly string[]).includes(s.event))) return false;
  return true;
}

/** The summaries of one page of index members that pass the summary filters (an expired one is skipped: the index is trimmed later). */
async function summaries(redis: RedisClient, prefix: string, members: readonly string[], f: DeliveryFilter): Promise<DeliverySummary[]> {
  const keys = historyKeys(prefix);
  const p = redis.pipeline();
  for (const m of members) p.hgetall(keys.summary(m));
  const rows = (await p.exec()) ?? [];
  const out: DeliverySummary[] = [];
  members.forEach((m, i) => {
    const h = rows[i]?.[1] as Record<string, string> | undefined;
    if (h && Object.keys(h).length > 0) {
      const s = summaryOf(m, h);
      if (matches(s, f)) out.push(s);
    }
  });
  return out;
}

/** The kept bodies of `keys`, one round trip; an unreadable one is an error in its place. */
async function bodiesOf(redis: RedisClient, prefix: string, keys: readonly string[]): Promise<(Buffer | null | KeptBodyError)[]> {
  try {
    return await readKeptBodies(redis, prefix, keys);
  } catch (err) {
    if (!(err instanceof KeptBodyError)) throw err;
    // Rare (a body of another version's form): read them one by one to tell which.
    return Promise.all(
      keys.map((k) =>
        readKeptBodies(redis, prefix, [k]).then(
          ([b]) => b ?? null,
          (e: unknown) => (e instanceof KeptBodyError ? e : Promise.reject(e)),
        ),
      ),
    );
  }
}

/** Of `candidates`, those whose kept body satisfies `where`, counting in `stats` those without one. */
async function byContent(
  redis: RedisClient,
  prefix: string,
  candidates: readonly DeliverySummary[],
  where: WhereQuery,
  stats: ScanStats,
): Promise<DeliverySummary[]> {
  const bodies = await bodiesOf(
    redis,
    prefix,
    candidates.map((s) => s.key),
  );
  return candidates.filter((s, i) => {
    const body = bodies[i];
    if (body === null || body === undefined) stats.withoutBody++;
    else if (body instanceof KeptBodyError) stats.unreadable++;
    else {
      const env = parseEnvelope(body);
      return matchesWhere(where, env.name ?? s.event, env.data);
    }
    return false;
  });
}

/**
 * The deliveries in the history that match `f`, newest first, a page of the time index at a time (bounded memory:
 * one page of summaries and bodies); `stats` counts what was read. Stops at `f.scanMax` index entries (setting
 * `capped`), or when the consumer stops. For `rerun` and the listings.
 */
export async function* findDeliveries(
  redis: RedisClient,
  prefix: string,
  f: DeliveryFilter,
  stats: ScanStats = { scanned: 0, withoutBody: 0, unreadable: 0, capped: false },
): AsyncGenerator<DeliverySummary> {
  const scanMax = f.scanMax ?? (f.where ? Number.POSITIVE_INFINITY : 20_000);
  const page = f.where ? 500 : 200;
  for await (const members of indexPages(redis, historyKeys(prefix).index, f.since, page)) {
    stats.scanned += members.length;
    const passed = await summaries(redis, prefix, members, f);
    const found = f.where && passed.length > 0 ? await byContent(redis, prefix, passed, f.where, stats) : passed;
    for (const s of found) yield s;
    if (stats.scanned >= scanMax) {
      stats.capped = true;
      return;
    }
  }
}

/** Deliveries in the history matching the filter, newest first, at most `f.limit` (50); `more` when the scan stopped early. */
export async function listDeliveries(redis: RedisClient, prefix: string, f: DeliveryFilter = {}): Promise<DeliveryListing> {
  const limit = f.limit ?? 50;
  const stats: ScanStats = { scanned: 0, withoutBody: 0, unreadable: 0, capped: false };
  const deliveries: DeliverySummary[] = [];
  for await (const s of findDeliveries(redis, prefix, f, stats)) {
    deliveries.push(s);
    if (deliveries.length >= limit) return { deliveries, ...stats, more: true };
  }
  return { deliveries, ...stats, more: stats.capped };
}
