import type { RedisClient } from '../redis/index.js';
import { parseScheduleRef, scheduleKey } from '../queue/index.js';
import { historyKeys, parseJobId } from './keys.js';
import type { HistoryEntry } from './record.js';
import { rerunOf, rerunsOf, type RerunLink, type RerunOf } from './rerun-link.js';

/** The summary of one delivery, as `deliveries` lists it. */
export interface DeliverySummary {
  readonly key: string;
  /** ISO time; null when only later parts were recorded (history turned on meanwhile). */
  readonly receivedAt: string | null;
  readonly queuedAt: string | null;
  readonly bytes: number | null;
  readonly secretIndex: number | null;
  /**
   * `webhook`, `reconcile` (synthesized by reconcile), `poll` (a derived event) or `schedule` (a schedule's run); null
   * when not recorded.
   */
  readonly source: string | null;
  readonly event: string | null;
  readonly conversation: string | null;
  readonly contact: string | null;
  /** `invalid` (dead-lettered without fan-out), `no_handlers`, else null. */
  readonly state: string | null;
  /** Each subscribed handler's latest: its placement until it ran, then the outcome of its latest attempt. */
  readonly handlers: Readonly<Record<string, string>>;
  readonly duplicates: number;
  /** Its re-runs (`switchyard rerun`), oldest first; absent when it has none. */
  readonly reruns?: readonly RerunLink[];
  /** A re-run's own history: the run it re-ran (absent for a delivery). */
  readonly rerunOf?: RerunOf;
}

/** Everything `trace` shows of one delivery. */
export interface Trace extends DeliverySummary {
  /** Oldest first. */
  readonly entries: readonly HistoryEntry[];
  /** When the history expires (ms from now); null when it does not. */
  readonly expiresInMs: number | null;
}

const iso = (v: string | undefined): string | null =>
  v === undefined || !Number.isFinite(Number(v)) ? null : new Date(Number(v)).toISOString();
const num = (v: string | undefined): number | null => (v === undefined || !Number.isFinite(Number(v)) ? null : Number(v));

/** The summary of `key` from its summary hash. */
export function summaryOf(key: string, h: Record<string, string>): DeliverySummary {
  const handlers: Record<string, string> = {};
  for (const [f, v] of Object.entries(h)) if (f.startsWith('h:')) handlers[f.slice(2)] = v;
  return {
    key,
    receivedAt: iso(h['receivedAt']),
    queuedAt: iso(h['queuedAt']),
    bytes: num(h['bytes']),
    secretIndex: num(h['secretIndex']),
    source: h['source'] ?? null,
    event: h['event'] ?? null,
    conversation: h['conversation'] ?? null,
    contact: h['contact'] ?? null,
    state: h['state'] ?? null,
    handlers,
    duplicates: num(h['duplicates']) ?? 0,
    ...rerunFields(h),
  };
}

/** The re-run links of a summary, only when it has any. */
function rerunFields(h: Record<string, string>): Pick<DeliverySummary, 'reruns' | 'rerunOf'> {
  const reruns = rerunsOf(h);
  const of = rerunOf(h);
  return { ...(reruns.length > 0 ? { reruns } : {}), ...(of ? { rerunOf: of } : {}) };
}

/** The time an entry is shown at: an attempt's start, anything else's `at`. */
const shownAt = (e: HistoryEntry): number => (e.kind === 'attempt' ? e.startedAt : e.at);

function parseEntries(raw: readonly string[]): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  for (const r of raw) {
    try {
      out.push(JSON.parse(r) as HistoryEntry);
    } catch {
      /* an entry cut by hand or by a newer writer: skipped */
    }
  }
  // Written from several processes: put them in time order, an attempt at its start (the time `trace` shows for it).
  return out.sort((a, b) => shownAt(a) - shownAt(b));
}

/**
 * The history of a delivery, by its key, or by a job id (`d/<key>`,
 * `d/<key>/<handler>` as BullMQ and `dlq list` show them, or a debounced
 * burst's `b/…` job once it ran); of a schedule run by its key
 * (`schedule:<id>:<tick ISO>`) or job id (`repeat:<id>:<ms>`); null when
 * nothing is recorded.
 */
export async function readTrace(redis: RedisClient, prefix: string, ref: string): Promise<Trace | null> {
  const keys = historyKeys(prefix);
  const candidates = [ref];
  const parsed = parseJobId(ref);
  if (parsed) candidates.unshift(parsed.key);
  // A schedule run's job id (repeat:<id>:<ms>) names its key, also before its first attempt ended.
  const scheduled = ref.startsWith('repeat:') ? parseScheduleRef(ref) : null;
  if (scheduled) candidates.unshift(scheduleKey(scheduled.id, scheduled.tickMs));
  const viaJob = await redis.get(keys.job(ref));
  if (viaJob) candidates.unshift(viaJob);
  for (const key of candidates) {
    const [[, h], [, list], [, pttl]] = (await redis
      .pipeline()
      .hgetall(keys.summary(key))
      .lrange(keys.entries(key), 0, -1)
      .pttl(keys.summary(key))
      .exec()) as [[Error | null, Record<string, string>], [Error | null, string[]], [Error | null, number]];
    if (Object.keys(h ?? {}).length === 0 && (list ?? []).length === 0) continue;
    return {
      ...summaryOf(key, h ?? {}),
      entries: parseEntries(list ?? []),
      expiresInMs: typeof pttl === 'number' && pttl >= 0 ? pttl : null,
    };
  }
  return null;
}
