import type { RedisClient } from '../../redis/index.js';
import type { SnapshotEvent } from '../../events/index.js';
import type { SnapshotChange, SnapshotKind, Stage } from './snapshot-diff.js';

/**
 * The snapshot in Redis, under the poller's keys of its world
 * (src/sources/poll/poller.ts `pollKeys`: a fresh sandbox's records are not
 * the last one's). Records are kept in small hashes of at most 100 ids each
 * (`<kind>:b:<id / 100>`), which Redis stores as listpacks: a few bytes per
 * record instead of a hash table entry's ~70.
 */
export function snapshotKeys(pollBase: string) {
  const at = `${pollBase}:snap`;
  return {
    bucket: (kind: SnapshotKind, n: number) => `${at}:${kind}:b:${n}`,
    /** Set: the bucket numbers of a kind in use. */
    buckets: (kind: SnapshotKind) => `${at}:${kind}:buckets`,
    /**
     * Hash: `at` (ms, API clock: start of the kind's last refresh; absent until its baseline), `cursor` (contacts: the
     * last refresh's start, as ISO).
     */
    meta: (kind: SnapshotKind) => `${at}:${kind}:meta`,
    /** Hash: stage id → the stage as events carry it (JSON). */
    stages: `${at}:stages`,
    /** Hash: `<change key>~<after ms>` → the change seen (JSON), until it is known received. */
    journal: `${at}:journal`,
  };
}

const BUCKET = 100;

/** One kind's records in bucketed hashes. */
export class SnapshotMap {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ReturnType<typeof snapshotKeys>,
    private readonly kind: SnapshotKind,
  ) {}

  private bucketOf(id: string): number {
    const n = Number(id);
    return Number.isSafeInteger(n) && n >= 0 ? Math.floor(n / BUCKET) : -1;
  }

  /** Every record kept: id → state. */
  async all(): Promise<Map<string, string>> {
    const buckets = await this.redis.smembers(this.keys.buckets(this.kind));
    const out = new Map<string, string>();
    const hashes = await Promise.all(buckets.map((b) => this.redis.hgetall(this.keys.bucket(this.kind, Number(b)))));
    for (const h of hashes) for (const [id, v] of Object.entries(h)) out.set(id, v);
    return out;
  }

  /** The states of these ids (undefined: not kept). */
  async get(ids: readonly string[]): Promise<Map<string, string | undefined>> {
    const vals = await Promise.all(ids.map((id) => this.redis.hget(this.keys.bucket(this.kind, this.bucketOf(id)), id)));
    return new Map(ids.map((id, i) => [id, vals[i] ?? undefined]));
  }

  async set(entries: ReadonlyMap<string, string>, forget: readonly string[] = []): Promise<void> {
    if (entries.size === 0 && forget.length === 0) return;
    const tx = this.redis.multi();
    const byBucket = new Map<number, Record<string, string>>();
    for (const [id, v] of entries) {
      const b = this.bucketOf(id);
      byBucket.set(b, { ...(byBucket.get(b) ?? {}), [id]: v });
    }
    for (const [b, fields] of byBucket) tx.hset(this.keys.bucket(this.kind, b), fields);
    if (byBucket.size) tx.sadd(this.keys.buckets(this.kind), ...[...byBucket.keys()].map(String));
    for (const id of forget) tx.hdel(this.keys.bucket(this.kind, this.bucketOf(id)), id);
    await tx.exec();
  }

  /** Drops every record of the kind (a new baseline). */
  async clear(): Promise<void> {
    const buckets = await this.redis.smembers(this.keys.buckets(this.kind));
    const tx = this.redis.multi();
    for (const b of buckets) tx.del(this.keys.bucket(this.kind, Number(b)));
    tx.del(this.keys.buckets(this.kind), this.keys.meta(this.kind));
    await tx.exec();
  }
}

/** A change in the journal as stored. */
interface JournalEntry {
  readonly e: SnapshotEvent;
  readonly k: string;
  readonly id: string;
  readonly a: number;
  readonly o: number;
  readonly d: Record<string, unknown>;
}

export const journalField = (c: Pick<SnapshotChange, 'changeKey' | 'afterMs'>): string => `${c.changeKey}~${c.afterMs}`;

/**
 * Changes the snapshot saw, kept until each is known received (its change key
 * claimed by a delivery of it): what reconcile turns into deliveries. Normally
 * near empty: the webhook of a change arrives before the refresher looks twice.
 */
export class SnapshotJournal {
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
  ) {}

  async add(changes: readonly SnapshotChange[]): Promise<void> {
    if (changes.length === 0) return;
    const fields: Record<string, string> = {};
    for (const c of changes) {
      const entry: JournalEntry = { e: c.event, k: c.changeKey, id: c.resourceId, a: c.afterMs, o: c.observedMs, d: c.data };
      fields[journalField(c)] = JSON.stringify(entry);
    }
    // HSETNX semantics per field are not needed: the same field is the same change, seen again.
    await this.redis.hset(this.key, fields);
  }

  async all(): Promise<SnapshotChange[]> {
    const raw = await this.redis.hgetall(this.key);
    const out: SnapshotChange[] = [];
    for (const v of Object.values(raw)) {
      try {
        const j = JSON.parse(v) as JournalEntry;
        out.push({ event: j.e, changeKey: j.k, resourceId: j.id, afterMs: j.a, observedMs: j.o, data: j.d });
      } catch {
        // An unreadable entry (never written by this version) is skipped.
      }
    }
    return out.sort((x, y) => x.observedMs - y.observedMs);
  }

  async drop(changes: readonly Pick<SnapshotChange, 'changeKey' | 'afterMs'>[]): Promise<void> {
    if (changes.length) await this.redis.hdel(this.key, ...changes.map(journalField));
  }
}

/** Stages seen in listings, for `previous` of a later move. */
export async function readStages(redis: RedisClient, key: string): Promise<Map<string, Stage>> {
  const raw = await redis.hgetall(key);
  const out = new Map<string, Stage>();
  for (const [id, v] of Object.entries(raw)) {
    try {
      out.set(id, JSON.parse(v) as Stage);
    } catch {
      // skipped: named by id alone when needed
    }
  }
  return out;
}

export async function writeStages(redis: RedisClient, key: string, stages: ReadonlyMap<string, Stage>): Promise<void> {
  if (stages.size) await redis.hset(key, Object.fromEntries([...stages].map(([id, s]) => [id, JSON.stringify(s)])));
}
