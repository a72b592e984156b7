import type { RedisClient } from '../redis/index.js';

/** A step a run completed, in the order its run completed them. */
export interface CompletedStep {
  readonly name: string;
  /** When its result was stored (ms since epoch). */
  readonly completedAt: number;
}

/**
 * Where `ctx.step` results live: one entry per (run scope, step name), and the
 * order in which each run completed its steps (what `rerun --from-step` replays).
 * A stored result is returned on every later attempt, so a step's writes
 * happen once even after the API's 24-hour idempotency memory has passed.
 */
export interface StepStore {
  /** The stored JSON text of a step, or null when it never completed. */
  get(scope: string, step: string): Promise<string | null>;
  set(scope: string, step: string, json: string): Promise<void>;
  /** The steps of `scope` that completed, first completed first; absent: the store does not keep the order. */
  completed?(scope: string): Promise<CompletedStep[]>;
  /** Whether each step's result is kept (a check, not a read: a test kit's store does not note it as a step of the run). */
  kept?(scope: string, steps: readonly string[]): Promise<boolean[]>;
}

/** How long step results are kept: past any retry horizon (DEDUPE_TTL) and as long as the history (HISTORY_TTL), plus a day. */
export function stepResultsTtlMs(t: { readonly dedupeTtlMs: number; readonly historyTtlMs: number }): number {
  return Math.max(t.dedupeTtlMs, t.historyTtlMs, 7 * 86_400_000) + 86_400_000;
}

/** `<ms> <name>` entries of a run's order list, the first of each name kept. */
function parseOrder(entries: readonly string[]): CompletedStep[] {
  const seen = new Set<string>();
  const out: CompletedStep[] = [];
  for (const e of entries) {
    const sp = e.indexOf(' ');
    const name = e.slice(sp + 1);
    if (sp < 0 || seen.has(name)) continue;
    seen.add(name);
    out.push({ name, completedAt: Number(e.slice(0, sp)) });
  }
  return out;
}

/** Redis-backed steps; entries (and each run's order list) expire after `ttlMs` ({@link stepResultsTtlMs}). */
export class RedisStepStore implements StepStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  private key(scope: string, step: string): string {
    return `${this.prefix}:step:${scope}:${step}`;
  }

  /** The run's completion order: a list of `<ms> <name>` (under `steps:`, apart from the results under `step:`). */
  private orderKey(scope: string): string {
    return `${this.prefix}:steps:${scope}`;
  }

  get(scope: string, step: string): Promise<string | null> {
    return this.redis.get(this.key(scope, step));
  }

  async set(scope: string, step: string, json: string): Promise<void> {
    const order = this.orderKey(scope);
    await this.redis
      .multi()
      .set(this.key(scope, step), json, 'PX', this.ttlMs)
      .rpush(order, `${this.now()} ${step}`)
      .pexpire(order, this.ttlMs)
      .exec();
  }

  async completed(scope: string): Promise<CompletedStep[]> {
    return parseOrder(await this.redis.lrange(this.orderKey(scope), 0, -1));
  }

  async kept(scope: string, steps: readonly string[]): Promise<boolean[]> {
    if (steps.length === 0) return [];
    const p = this.redis.pipeline();
    for (const s of steps) p.exists(this.key(scope, s));
    return ((await p.exec()) ?? []).map((r) => r[1] === 1);
  }
}

/** A run's completed steps, in order, and whether each one's result is still kept. */
export interface KeptStep extends CompletedStep {
  readonly kept: boolean;
}

/**
 * The steps a run completed (its job id, `d/<key>/<handler>`, or a re-run's `r/…`), first completed first, each
 * with whether its result is still kept: what `rerun --from-step` can start from. Empty when the run completed
 * no step, or its results expired.
 */
export async function originalSteps(redis: RedisClient, prefix: string, jobId: string): Promise<KeptStep[]> {
  const store = new RedisStepStore(redis, prefix, 0);
  const steps = await store.completed(jobId);
  const kept = await store.kept(
    jobId,
    steps.map((s) => s.name),
  );
  return steps.map((s, i) => ({ ...s, kept: kept[i] === true }));
}

/** In-process steps: `replay --inline` and tests that need no Redis. */
export class MemoryStepStore implements StepStore {
  private readonly entries = new Map<string, string>();
  private readonly order = new Map<string, CompletedStep[]>();

  async get(scope: string, step: string): Promise<string | null> {
    return this.entries.get(`${scope}\u0000${step}`) ?? null;
  }

  async set(scope: string, step: string, json: string): Promise<void> {
    const k = `${scope}\u0000${step}`;
    if (!this.entries.has(k)) this.order.set(scope, [...(this.order.get(scope) ?? []), { name: step, completedAt: Date.now() }]);
    this.entries.set(k, json);
  }

  async completed(scope: string): Promise<CompletedStep[]> {
    return [...(this.order.get(scope) ?? [])];
  }

  async kept(scope: string, steps: readonly string[]): Promise<boolean[]> {
    return steps.map((s) => this.entries.has(`${scope}\u0000${s}`));
  }
}
