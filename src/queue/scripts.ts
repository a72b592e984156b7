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
  'fanOutCheck',
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
      // The receiver formats receivedAt once per millisecond, so a batch's deliveries mostly share it: parsed once.
      let iso: string | undefined;
      let ms = 0;
      for (const p of batch) {
        if (p.receivedAt !== iso) {
          iso = p.receivedAt;
          ms = Date.parse(iso) || Date.now();
        }
        keys.push(p.dedupeKey);
        args.push(p.payload, p.receivedAt, ms);
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

const bound = new WeakMap<RedisClient, ReturnType<typeof QUEUE_SCRIPTS.on>>();

/** The scripts' calls on a client, made once per client (a fan-out calls them per delivery). */
function callsOn(redis: RedisClient): ReturnType<typeof QUEUE_SCRIPTS.on> {
  let calls = bound.get(redis);
  if (!calls) bound.set(redis, (calls = QUEUE_SCRIPTS.on(redis)));
  return calls;
}

/** One part of a script call that several owners fill (its keys and arguments, in the script's order). */
export interface ScriptPart {
  readonly keys: readonly string[];
  readonly args: readonly LuaArg[];
}

/** A run the waits part answered: the wait's id and the run's reference. */
export interface AnsweredWait {
  readonly id: string;
  readonly run: string;
}

/** The fan-out check script's command name on a client (the worker's connection sends it outside its auto-pipelining). */
export const FAN_OUT_CHECK_SCRIPT = 'fanOutCheck';

/** What {@link runFanOutCheck} answers (`./lua/fanOutCheck-n.lua`). */
export interface FanOutCheckReply {
  /** This delivery holds its change's claim (or none was asked); false: another delivery of the change does, no wait was looked at. */
  readonly claimed: boolean;
  /** The event's name is watched but its body and match keys were not sent: the waits part is still to do. */
  readonly need: boolean;
  /** The waits it answered. */
  readonly woken: AnsweredWait[];
}

/** One delivery's section of a fan-out check: its change claim's part, its waits part, or both. */
export interface FanOutCheckSection {
  readonly claim: ScriptPart | null;
  readonly waits: ScriptPart | null;
}

/**
 * Runs the fan-out check script for deliveries in one call, each with a change claim's part
 * (ChangeClaims.claimPart), a waits part (WaitStore.eventPart) or both: per delivery the claim
 * first and the waits only when it holds; a reply per section, in order.
 */
export async function runFanOutCheck(redis: RedisClient, sections: readonly FanOutCheckSection[]): Promise<FanOutCheckReply[]> {
  const keys: string[] = [];
  const args: LuaArg[] = [sections.length];
  for (const { claim, waits } of sections) {
    args.push(`${claim ? 'c' : ''}${waits ? 'w' : ''}`);
    for (const part of [claim, waits]) {
      if (!part) continue;
      keys.push(...part.keys);
      args.push(...part.args);
    }
  }
  const flat = (await callsOn(redis)[FAN_OUT_CHECK_SCRIPT](keys, args)) as (number | string)[];
  const replies: FanOutCheckReply[] = [];
  for (let i = 0; i < flat.length;) {
    const claimed = flat[i] === 1;
    const need = flat[i + 1] === 1;
    const n = Number(flat[i + 2]);
    const woken: AnsweredWait[] = [];
    for (let j = 0; j < n; j++) woken.push({ id: String(flat[i + 3 + 2 * j]), run: String(flat[i + 4 + 2 * j]) });
    replies.push({ claimed, need, woken });
    i += 3 + 2 * n;
  }
  return replies;
}
