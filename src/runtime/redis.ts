import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { startManagedRedis, type ManagedRedis } from '../redis/managed.js';

export interface ResolvedRedis {
  readonly url: string;
  readonly managed: ManagedRedis | undefined;
}

/**
 * REDIS_URL when set; otherwise a managed local redis-server (data under
 * `.switchyard/redis`, AOF on, noeviction, loopback, a free port) that lives
 * as long as this process. Its URL is written to `.switchyard/redis.url` while
 * it runs, so `dlq`, `replay --direct` and `send --direct` find it without REDIS_URL.
 */
export async function resolveRedis(config: Config, log: Logger): Promise<ResolvedRedis> {
  if (config.redisUrl) return { url: config.redisUrl, managed: undefined };
  const managed = await startManagedRedis({ dir: join(config.stateDir, 'redis') });
  const urlFile = join(config.stateDir, 'redis.url');
  writeFileSync(urlFile, `${managed.url}\n`);
  log.info({ port: managed.port, dir: managed.dir }, 'started a managed local redis-server (set REDIS_URL to use your own)');
  return {
    url: managed.url,
    managed: {
      ...managed,
      stop: async () => {
        rmSync(urlFile, { force: true });
        await managed.stop();
      },
    },
  };
}
