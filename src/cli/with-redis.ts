import type { Config } from '../config/index.js';
import type { RedisClient } from '../redis/index.js';
import type { CliIo } from './command.js';
import { cliConfig, cliRedis } from './connect.js';

const NEEDS_REDIS =
  'needs REDIS_URL (and QUEUE_PREFIX when not "switchyard") of your receiver and workers, ' +
  'or a running `npm run dev` / `switchyard start` with its managed Redis';

/**
 * Runs `fn` with a connection to the Redis of the receiver and workers (REDIS_URL, QUEUE_PREFIX, or a running dev's
 * managed Redis), on the workspace `--workspace` names (`workspace`; see `cliConfig`): its prefix and Config.
 */
export async function withRedis<T>(
  io: CliIo,
  what: string,
  workspace: string | undefined,
  fn: (redis: RedisClient, prefix: string, config: Config) => Promise<T>,
): Promise<T> {
  const config = cliConfig(io, workspace);
  const redis = await cliRedis(config, `${what} ${NEEDS_REDIS}`, io.cwd);
  try {
    return await fn(redis, config.queuePrefix, config);
  } finally {
    redis.disconnect();
  }
}
