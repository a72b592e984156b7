import { Redis, type RedisOptions } from 'ioredis';

/**
 * `producer`: fails fast (no offline queue, one attempt, 1 s command timeout)
 * so a dead Redis answers 503 within a second instead of hanging the request;
 * auto-pipelined, so concurrent requests share socket writes.
 * `worker`: what BullMQ workers need (`maxRetriesPerRequest: null`), keeps
 * retrying through outages.
 */
export type ConnectionRole = 'producer' | 'worker';

/**
 * Turns a REDIS_URL into ioredis options. Accepted forms:
 * `redis://[user:pass@]host:port[/db]`, `rediss://…` (TLS), and Sentinel as
 * `redis+sentinel://[:pass@]host1:26379,host2:26379/<master-name>[/db]`.
 */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const m = /^(redis\+sentinel|sentinel):\/\/(?:([^:@/]*):?([^@/]*)@)?([^/]+)\/([^/]+)(?:\/(\d+))?\/?$/.exec(url);
  if (m) {
    const sentinels = (m[4] as string).split(',').map((hp) => {
      const [host, port] = hp.split(':');
      return { host: host as string, port: port ? Number(port) : 26379 };
    });
    const password = m[3] ? decodeURIComponent(m[3]) : undefined;
    return {
      sentinels,
      name: decodeURIComponent(m[5] as string),
      ...(password ? { password, sentinelPassword: password } : {}),
      ...(m[6] ? { db: Number(m[6]) } : {}),
    };
  }
  const u = new URL(url);
  const tls = u.protocol === 'rediss:' || u.protocol === 'valkeys:';
  const db = u.pathname.replace(/^\//, '');
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(tls ? { tls: { servername: u.hostname } } : {}),
  };
}

/** Opens an ioredis connection for the given role. */
export function createRedisConnection(url: string, role: ConnectionRole, name?: string): Redis {
  const base = redisOptionsFromUrl(url);
  const roleOptions: RedisOptions =
    role === 'producer'
      ? {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          connectTimeout: 1_000,
          commandTimeout: 1_000,
          // Concurrent requests' ingest commands go out in one socket write per
          // tick instead of one each. Fail-fast is unchanged: no offline queue,
          // so nothing is queued while the connection is down.
          enableAutoPipelining: true,
          retryStrategy: (times) => Math.min(50 * times, 500),
        }
      : {
          maxRetriesPerRequest: null,
          enableReadyCheck: true,
          retryStrategy: (times) => Math.min(100 * times, 2_000),
        };
  return new Redis({ ...base, ...roleOptions, ...(name ? { connectionName: name } : {}), lazyConnect: false });
}

/** Closes a connection, falling back to disconnect when QUIT cannot be sent. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  try {
    await Promise.race([redis.quit(), new Promise((r) => setTimeout(r, 1_000))]);
  } catch {
    /* already closed or unreachable: disconnect below */
  }
  redis.disconnect();
}
