import type { StoredDelivery } from './delivery.js';
import { ingestKeys } from './names.js';
import type { RedisClient } from '../redis/connection.js';

export type IngestOutcome = 'accepted' | 'duplicate';

/**
 * One atomic step, the only Redis work on the webhook's hot path: claim the
 * dedupe key for DEDUPE_TTL and, only if it was new, append the delivery to
 * the inbox list. Both happen or neither (a Lua script), so a crash can never
 * leave a delivery marked as seen but not stored. The dedupe key is separate
 * from the job, so it still holds after the job completed and was removed.
 */
const INGEST_LUA = `
if redis.call('SET', KEYS[1], ARGV[3], 'NX', 'PX', ARGV[1]) then
  redis.call('RPUSH', KEYS[2], ARGV[2])
  return 1
end
return 0`;

type WithIngest = RedisClient & {
  switchyardIngest(dedupeKey: string, inbox: string, ttlMs: number, payload: string, receivedAt: string): Promise<number>;
};

/** Durable, deduplicated ingest into Redis; throws when Redis cannot take it. */
export class IngestStore {
  private readonly keys;
  private readonly redis: WithIngest;

  constructor(redis: RedisClient, prefix: string, private readonly dedupeTtlMs: number) {
    this.keys = ingestKeys(prefix);
    if (!('switchyardIngest' in redis)) redis.defineCommand('switchyardIngest', { numberOfKeys: 2, lua: INGEST_LUA });
    this.redis = redis as WithIngest;
  }

  async put(delivery: StoredDelivery): Promise<IngestOutcome> {
    const added = await this.redis.switchyardIngest(
      this.keys.dedupe(delivery.key), this.keys.inbox, this.dedupeTtlMs, JSON.stringify(delivery), delivery.receivedAt,
    );
    return added === 1 ? 'accepted' : 'duplicate';
  }
}
