import type { RedisClient } from './connection.js';
/**
 * Settings an external Redis should have for Switchyard's promise: eviction
 * off (an evicted job or dedupe key is a lost or repeated delivery) and
 * persistence on (an acknowledged delivery must survive a restart).
 * Returns human-readable warnings; empty when all is well.
 */
export async function redisWarnings(redis: RedisClient): Promise<string[]> {
  const warnings: string[] = [];
  const get = async (name: string): Promise<string | undefined> => {
    try {
      const res = await redis.config('GET', name);
      return res[1];
    } catch {
      return undefined; // CONFIG may be disabled on managed services
    }
  };
  const policy = await get('maxmemory-policy');
  if (policy !== undefined && policy !== 'noeviction') {
    warnings.push(`Redis maxmemory-policy is "${policy}"; set it to "noeviction" so queued deliveries and dedupe keys are never evicted`);
  }
  const aof = await get('appendonly');
  const save = await get('save');
  if (aof !== undefined && aof !== 'yes' && (save === undefined || save.trim() === '')) {
    warnings.push(
      'Redis persistence is off (appendonly no, no save points); ' +
        'enable AOF (appendonly yes) so acknowledged deliveries survive a restart',
    );
  } else if (aof === 'no') {
    warnings.push(
      'Redis AOF is off (only RDB snapshots); ' +
        'deliveries acknowledged since the last snapshot are lost on a crash. Enable appendonly yes',
    );
  }
  return warnings;
}
