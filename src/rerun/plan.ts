import { historyKeys, type AttemptEntry } from '../history/index.js';
import type { RerunBudget, RerunDeps } from './deps.js';
import { rerunBodies } from './bodies.js';
import { selectDeliveries, type RerunItem, type RerunSelection } from './selection.js';

/** What a rerun would do, shown before it starts (`rerun --dry-run`, the admin's confirmation). */
export interface RerunPlan {
  readonly handler: string;
  readonly selection: RerunSelection;
  /** The deliveries to run again, newest first: the selection a batch freezes. */
  readonly items: readonly RerunItem[];
  /** Per event: deliveries, and the API calls their original runs made (their latest attempt). */
  readonly byEvent: readonly { readonly event: string; readonly deliveries: number; readonly calls: number }[];
  /** API calls the re-runs may spend: what the original runs' latest attempts made. */
  readonly calls: number;
  /** Deliveries whose original run has no attempt recorded (its calls unknown, counted as 0). */
  readonly unmeasured: number;
  readonly budget: RerunBudget;
  /** How long the calls take at the re-runs' share of the budget (ms). */
  readonly estimatedMs: number;
  /** Deliveries matching the filters but left out, with why. */
  readonly skipped: readonly { readonly reason: string; readonly count: number }[];
  /** Deliveries of the history read; `more`: it holds more than were read (the limit). */
  readonly scanned: number;
  readonly more: boolean;
}

const CHUNK = 500;

/** The selection, what its runs cost the first time, and how long they take within the re-runs' budget. */
export async function planRerun(deps: RerunDeps, selection: RerunSelection): Promise<RerunPlan> {
  const sel = await selectDeliveries(deps, selection);
  const skipped = new Map(sel.skipped);
  const bodies = deps.bodies ?? rerunBodies(deps.redis, deps.prefix);
  const items: RerunItem[] = [];
  const calls = new Map<string, number | null>();
  for (let i = 0; i < sel.items.length; i += CHUNK) {
    const chunk = sel.items.slice(i, i + CHUNK);
    const [kept, cost] = await Promise.all([bodies(chunk.map((x) => x.key)), callsOf(deps, chunk, sel.handler.id)]);
    chunk.forEach((item, j) => {
      if (!kept.has(item.key)) {
        const why = 'its body is not kept (received before bodies were kept, or kept no longer)';
        skipped.set(why, (skipped.get(why) ?? 0) + 1);
        return;
      }
      items.push(item);
      calls.set(item.key, cost[j] ?? null);
    });
  }
  const byEvent = new Map<string, { event: string; deliveries: number; calls: number }>();
  let total = 0;
  let unmeasured = 0;
  for (const item of items) {
    const e = byEvent.get(item.event) ?? { event: item.event, deliveries: 0, calls: 0 };
    const c = calls.get(item.key) ?? null;
    if (c === null) unmeasured++;
    e.deliveries++;
    e.calls += c ?? 0;
    total += c ?? 0;
    byEvent.set(item.event, e);
  }
  return {
    handler: sel.handler.id,
    selection,
    items,
    byEvent: [...byEvent.values()].sort((a, b) => b.deliveries - a.deliveries),
    calls: total,
    unmeasured,
    budget: deps.budget,
    estimatedMs: estimateMs(total, deps.budget),
    skipped: [...skipped].map(([reason, count]) => ({ reason, count })),
    scanned: sel.scanned,
    more: sel.more,
  };
}

/** How long `calls` take at the re-runs' share of the budget: callsPer10s every 10 s. */
export function estimateMs(calls: number, budget: RerunBudget): number {
  return Math.ceil((calls / budget.callsPer10s) * 10_000);
}

/** The API calls (HTTP attempts) of each delivery's latest attempt by the handler, from the history; null: none recorded. */
async function callsOf(deps: RerunDeps, items: readonly RerunItem[], handler: string): Promise<(number | null)[]> {
  const keys = historyKeys(deps.prefix);
  const p = deps.redis.pipeline();
  for (const item of items) p.lrange(keys.entries(item.key), 0, -1);
  const rows = (await p.exec()) ?? [];
  return items.map((_, i) => {
    const raw = (rows[i]?.[1] as string[] | undefined) ?? [];
    let latest: AttemptEntry | null = null;
    for (const r of raw) {
      const e = attemptOf(r);
      if (e?.handler === handler && (latest === null || e.startedAt >= latest.startedAt)) latest = e;
    }
    return latest === null ? null : latest.calls.length + (latest.callsDropped ?? 0);
  });
}

/** A history entry that is an attempt; null for the others (and an entry cut by hand). */
function attemptOf(raw: string): AttemptEntry | null {
  try {
    const e = JSON.parse(raw) as { kind?: unknown };
    return e.kind === 'attempt' ? (e as AttemptEntry) : null;
  } catch {
    return null;
  }
}
