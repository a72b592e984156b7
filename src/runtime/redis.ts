import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { startManagedRedis, type ManagedRedis, findServerOn, stopFoundServer } from '../redis/index.js';
import { lockStateDir } from './state-lock.js';

export interface ResolvedRedis {
  readonly url: string;
  readonly managed: ManagedRedis | undefined;
}

/**
 * REDIS_URL when set; otherwise a managed local redis-server (data under
 * `.switchyard/redis`, AOF on, noeviction, loopback, a free port) that lives
 * as long as this process and stops itself (AOF flushed) when this process
 * is gone, however it ended. Its URL is written to `.switchyard/redis.url`
 * while it runs, so `dlq`, `replay --direct` and `send --direct` find it
 * without REDIS_URL.
 *
 * The state directory is locked first (`owner.json`): a living owner is
 * refused (StateDirBusyError), a dead one's server still running on the data
 * directory is stopped cleanly before a new one starts on the same data, so
 * two servers never share it.
 */
export async function resolveRedis(config: Config, log: Logger, command = 'start'): Promise<ResolvedRedis> {
  if (config.redisUrl) return { url: config.redisUrl, managed: undefined };
  const lock = lockStateDir(config.stateDir, { command, port: String(config.port) });
  const dir = join(config.stateDir, 'redis');
  const urlFile = join(config.stateDir, 'redis.url');
  try {
    const left = await findServerOn(dir, urlFile);
    if (left?.owner !== undefined) {
      throw new Error(
        `a redis-server (pid ${left.pid}) on ${dir} is still run by process ${left.owner}, ` +
          'a switchyard that keeps no owner file (an older version?): ' +
          `stop it first (kill ${left.owner}); nothing was started or changed`,
      );
    }
    if (left) {
      log.warn(
        { pid: left.pid, port: left.port, dir, previousOwner: lock.previous?.pid },
        'a managed redis-server whose owner is gone is still running on this data directory: ' +
          'stopping it (its AOF is flushed) before starting a new one on the same data',
      );
      if (!(await stopFoundServer(left))) {
        const which = left.pid === undefined ? `port ${left.port}` : `pid ${left.pid}`;
        throw new Error(`the redis-server left running on ${dir} (${which}) did not stop within 15 s; stop it, then start again`);
      }
    }
    const managed = await startManagedRedis({ dir });
    writeFileSync(urlFile, `${managed.url}\n`);
    log.info({ port: managed.port, dir: managed.dir }, 'started a managed local redis-server (set REDIS_URL to use your own)');
    return {
      url: managed.url,
      managed: {
        ...managed,
        stop: async () => {
          rmSync(urlFile, { force: true });
          await managed.stop();
          lock.release();
        },
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}
