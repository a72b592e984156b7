import { LuaScripts, type LuaArg } from '../util/index.js';
import type { RedisClient } from '../redis/index.js';

/**
 * Typed calls of the ingest path's Lua scripts (`./lua/*.lua`, which document
 * their keys, arguments and replies). Every key of one prefix shares its slot
 * on Cluster (a hash-tagged QUEUE_PREFIX), which multi-key scripts require.
 */
export const QUEUE_SCRIPTS = new LuaScripts(new URL('./lua/', import.meta.url), [
  'ingestBatch',
  'pumpTakeMore',
  'pumpRecover',
  'orderEnqueue',
  'orderClaim',
  'orderRelease',
  'debounceAdd',
  'debounceTake',
  'changeClaim',
]);

export interface IngestBatchItem {
  readonly dedupeKey: string;
  readonly payload: string | Buffer;
  readonly receivedAt: string;
}

export interface IngestBatchKeys {
  readonly inbox: string;
  /** The pending fan-out set (src/queue/flow-pending.ts). */
  readonly pending: string;
  /** What precedes the delivery key in a dedupe key. */
  readonly dedupePrefix: string;
}

/** The ingest scripts bound to one client. */
export function queueScripts(redis: RedisClient) {
  const run = QUEUE_SCRIPTS.on(redis);
  return {
    /**
     * Stores the new deliveries of `batch` and marks them pending fan-out (`k.pending`, by receipt ms; each
     * `dedupeKey` is `k.dedupePrefix` + the delivery key); one character per delivery: `1` stored, `0` duplicate.
     */
    ingestBatch(k: IngestBatchKeys, batch: readonly IngestBatchItem[], dedupeTtlMs: number): Promise<string> {
      const keys = [k.inbox, k.pending];
      const args: LuaArg[] = [dedupeTtlMs, k.dedupePrefix.length];
      for (const p of batch) {
        keys.push(p.dedupeKey);
        args.push(p.payload, p.receivedAt, Date.parse(p.receivedAt) || Date.now());
      }
      return run.ingestBatch(keys, args) as Promise<string>;
    },
    /** Moves up to `max` more inbox items to `inflight`; returns the whole in-flight list. */
    pumpTakeMore: (inbox: string, inflight: string, max: number) => run.pumpTakeMore([inbox, inflight], [max]) as Promise<string[]>,
    /** Hands a dead pump's in-flight items back to the inbox: how many, or -1 when its heartbeat is back. */
    pumpRecover: (k: { inflight: string; inbox: string; heartbeat: string; pumps: string }, id: string) =>
      run.pumpRecover([k.inflight, k.inbox, k.heartbeat, k.pumps], [id]) as Promise<number>,
  };
}
