import { randomUUID } from 'node:crypto';
import type { FeedContext } from './context.js';
import { feedBatch } from './feed.js';
import { rerunKeys } from './keys.js';
import { trackBatch } from './track.js';

export interface FeederOptions {
  /** How often it looks at the running batches (default 250 ms). */
  readonly everyMs?: number;
  /** How long a batch stays with one feeder without a renewal (default 10 s): a killed worker's batches move on after that. */
  readonly leaseMs?: number;
}

/** A running feeder: `stop()` ends it after its current turn and gives its batches back. */
export interface RerunFeeder {
  /** One turn now (tests; the timer runs the same). */
  turn(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The workers' feeder of rerun batches: every `everyMs`, for each running batch it holds the lease of
 * (or takes, when free or expired), records the runs that ended and adds the next ones. Every worker
 * process runs one; a batch is fed by one at a time, and by another within `leaseMs` when that one dies.
 * Feeding twice adds nothing (job ids per item) and recording twice counts nothing (per-item outcomes).
 */
export function startRerunFeeder(ctx: FeedContext, opts: FeederOptions = {}): RerunFeeder {
  const keys = rerunKeys(ctx.prefix);
  const owner = `${process.pid}:${randomUUID()}`;
  const leaseMs = opts.leaseMs ?? 10_000;
  const held = new Set<string>();
  let current: Promise<void> | null = null;
  let stopped = false;

  const lease = async (batch: string): Promise<boolean> => {
    const key = keys.lease(batch);
    if ((await ctx.redis.set(key, owner, 'PX', leaseMs, 'NX')) === 'OK') return true;
    if ((await ctx.redis.get(key)) !== owner) return false;
    await ctx.redis.pexpire(key, leaseMs);
    return true;
  };
  const one = async (batch: string): Promise<void> => {
    if (!(await lease(batch))) return void held.delete(batch);
    held.add(batch);
    const state = await trackBatch(ctx, batch);
    if (state === 'running') await feedBatch(ctx, batch);
    if (state !== 'running' && state !== 'cancelling') held.delete(batch);
  };
  const turn = async (): Promise<void> => {
    const batches = await ctx.redis.smembers(keys.running);
    for (const b of batches) {
      if (stopped) return;
      await one(b).catch((err: unknown) =>
        ctx.log?.warn(
          { batch: b, err: err instanceof Error ? err.message : String(err) },
          'rerun feeder: batch turn failed; next turn retries',
        ),
      );
    }
  };
  const timer = setInterval(() => {
    if (current) return;
    current = turn()
      .catch((err: unknown) => ctx.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'rerun feeder: turn failed'))
      .finally(() => {
        current = null;
      });
  }, opts.everyMs ?? 250);
  timer.unref();
  return {
    turn: () => (current ??= turn().finally(() => (current = null))),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
      // Give the leases back, so another worker feeds them at once.
      for (const b of held)
        if ((await ctx.redis.get(keys.lease(b)).catch(() => null)) === owner) await ctx.redis.del(keys.lease(b)).catch(() => 0);
    },
  };
}
