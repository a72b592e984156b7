import { BURST_WINDOW_MS } from '../spec/index.js';

/** Result of one counted request. */
export interface BurstResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window frees up (only meaningful when refused). */
  retryAfter: number;
}

/**
 * Fixed 10-second window per token: the window opens on the token's first
 * request and `burst` requests fit in it. Refused requests are not counted.
 */
export class BurstLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  constructor(
    public burst: number,
    private readonly windowMs = BURST_WINDOW_MS,
  ) {}

  /**
   * Where the token's window stands, counting nothing: a request that is then refused for another reason leaves it as it was.
   * `limit` is the burst of the token's workspace (its plan), {@link burst} by default.
   */
  peek(key: string, now: number, limit = this.burst): BurstResult {
    const w = this.window(key, now);
    const retryAfter = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    return { allowed: w.count < limit, limit, remaining: Math.max(0, limit - w.count), retryAfter };
  }

  /** Counts a request (when the window has room) and says where the window stands after it. */
  take(key: string, now: number, limit = this.burst): BurstResult {
    const before = this.peek(key, now, limit);
    if (!before.allowed) return before;
    this.window(key, now).count += 1;
    return { ...before, remaining: before.remaining - 1 };
  }

  private window(key: string, now: number): { start: number; count: number } {
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    return w;
  }

  clear(): void {
    this.windows.clear();
  }
}

/** Start of the next calendar month (UTC): when a monthly allowance resets. */
export function nextMonthStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Result of one request against the monthly allowance. */
export interface QuotaResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetAt: number;
}

/**
 * Optional monthly allowance per workspace (spec: Limits; plans without a cap
 * send no quota headers, so a workspace without a configured limit gets none).
 */
export class QuotaTracker {
  private readonly quotas = new Map<number, QuotaEntry>();

  set(workspaceId: number, limit: number | null, used: number, now: number): void {
    if (limit === null) this.quotas.delete(workspaceId);
    else this.quotas.set(workspaceId, { limit, used, month: nextMonthStart(now) });
  }

  /** Counts a call; null when the workspace has no monthly cap. */
  take(workspaceId: number, now: number): QuotaResult | null {
    const q = this.quotas.get(workspaceId);
    if (!q) return null;
    const month = nextMonthStart(now);
    if (month !== q.month) Object.assign(q, { used: 0, month });
    if (q.used >= q.limit) return { allowed: false, limit: q.limit, remaining: 0, resetAt: month };
    q.used += 1;
    return { allowed: true, limit: q.limit, remaining: q.limit - q.used, resetAt: month };
  }

  clear(): void {
    this.quotas.clear();
  }

  /** Every workspace's allowance, for saving. */
  entries(): [number, QuotaEntry][] {
    return [...this.quotas].map(([id, q]) => [id, { ...q }]);
  }

  /** Puts saved allowances back. */
  restore(entries: readonly [number, QuotaEntry][]): void {
    this.quotas.clear();
    for (const [id, q] of entries) this.quotas.set(id, { ...q });
  }
}

/** One workspace's monthly allowance: the cap, the calls counted, and the month they count in (its end, epoch ms). */
export interface QuotaEntry {
  limit: number;
  used: number;
  month: number;
}
