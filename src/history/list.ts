import { matchesWhere, parseEnvelope, type EventName, type WhereQuery } from '../events/index.js';
import type { RedisClient } from '../redis/index.js';
import { KeptBodyError, unpackBody } from './bodies.js';
import { historyKeys } from './keys.js';
import { summaryOf, type DeliverySummary } from './read.js';
import { indexPages } from './scan.js';
import { HISTORY_SCRIPTS } from './scripts.js';

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

/**
 * What `--outcome` (and the dashboard's outcome field) takes: a handler's latest state, `pending` (placed, not run
 * yet) or one of the placements, or the delivery's own (`invalid`, `no_handlers`).
 */
export const DELIVERY_OUTCOMES: readonly string[] = [
  'completed',
  'skipped',
  'retry',
  'delay',
  'dead',
  'pause',
  'wait',
  'cancelled',
  'error',
  'pending',
  'invalid',
  'no_handlers',
  ...PENDING_STATES,
];

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

/** The summary filters only the full summary can answer (a handler's state): read with HGETALL before the bodies. */
const needsSummary = (f: DeliveryFilter): boolean => f.handler !== undefined || f.outcome !== undefined;

/** The summaries of `members` (an expired one, whose index entry is trimmed later, left out), in order. */
async function summaries(redis: RedisClient, prefix: string, members: readonly string[]): Promise<DeliverySummary[]> {
  const keys = historyKeys(prefix);
  const p = redis.pipeline();
  for (const m of members) p.hgetall(keys.summary(m));
  const rows = (await p.exec()) ?? [];
  const out: DeliverySummary[] = [];
  members.forEach((m, i) => {
    const h = rows[i]?.[1] as Record<string, string> | undefined;
    if (h && Object.keys(h).length > 0) out.push(summaryOf(m, h));
  });
  return out;
}

type BodiesCall = (keys: number, ...args: string[]) => Promise<(Buffer | number | null)[]>;

/**
 * Of `members`, the keys whose kept body satisfies `where` (and whose summary the event, conversation and contact
 * filters), in order: one `keptBodies` script call sends only the bodies that can match (src/history/lua), so the
 * client reads no summary and sends no command per delivery. Counts those without a body, or with an unreadable one.
 */
async function byContent(
  redis: RedisClient,
  prefix: string,
  members: readonly string[],
  f: DeliveryFilter & { where: WhereQuery },
  stats: ScanStats,
): Promise<string[]> {
  const keys = historyKeys(prefix);
  HISTORY_SCRIPTS.on(redis);
  const call = (redis as unknown as { keptBodiesBuffer: BodiesCall }).keptBodiesBuffer.bind(redis);
  const events = f.event !== undefined ? (f.where.events.includes(f.event as EventName) ? [f.event] : []) : f.where.events;
  if (events.length === 0) return [];
  const args = [...members.flatMap((m) => [keys.summary(m), keys.body(m)]), f.conversation ?? '', f.contact ?? '', ...events];
  const bodies = await call(members.length * 2, ...args);
  return members.filter((key, i) => {
    const body = bodies[i];
    if (body === null || body === undefined) return false;
    if (typeof body === 'number') {
      stats.withoutBody++;
      return false;
    }
    let raw: Buffer;
    try {
      raw = unpackBody(key, body);
    } catch (err) {
      if (!(err instanceof KeptBodyError)) throw err;
      stats.unreadable++;
      return false;
    }
    const env = parseEnvelope(raw);
    return env.name !== null && matchesWhere(f.where, env.name, env.data);
  });
}

/** One page's matches, in order: by the summary filters, then (with `where`) by content. */
async function pageMatches(
  redis: RedisClient,
  prefix: string,
  members: readonly string[],
  f: DeliveryFilter,
  stats: ScanStats,
): Promise<DeliverySummary[]> {
  const where = f.where;
  if (!where) return (await summaries(redis, prefix, members)).filter((s) => matches(s, f));
  const candidates = needsSummary(f) ? (await summaries(redis, prefix, members)).filter((s) => matches(s, f)).map((s) => s.key) : members;
  if (candidates.length === 0) return [];
  const found = await byContent(redis, prefix, candidates, { ...f, where }, stats);
  // The few that matched: their summaries for the listing (one that expired meanwhile is left out).
  return found.length === 0 ? [] : summaries(redis, prefix, found);
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
  // One page ahead: Redis reads the next page while this one is matched here (a rejection is handled when awaited).
  let ahead: Promise<DeliverySummary[]> | undefined;
  for await (const members of indexPages(redis, historyKeys(prefix).index, f.since, page)) {
    stats.scanned += members.length;
    const next = pageMatches(redis, prefix, members, f, stats);
    next.catch(() => undefined);
    if (ahead) for (const s of await ahead) yield s;
    ahead = next;
    if (stats.scanned >= scanMax) {
      stats.capped = true;
      break;
    }
  }
  if (ahead) for (const s of await ahead) yield s;
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
