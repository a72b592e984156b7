import { Cluster, Command, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { sleep } from '../util/index.js';
import { maskRedisUrl } from './describe.js';

/** A standalone/Sentinel connection or a Cluster client: BullMQ and Switchyard accept either. */
export type RedisClient = Redis | Cluster;

/**
 * `command`: a one-shot CLI command (`dlq`, `send --direct`, `replay
 * --direct`): connects only when asked (`connectForCommand`), gives up after a
 * few attempts, so an unreachable Redis is an error instead of a hang.
 * `producer`: fails fast (no offline queue, one attempt, 1 s command timeout)
 * so a dead Redis answers 503 within a second instead of hanging the request.
 * Not auto-pipelined: the ingest store already writes each turn's deliveries
 * with one script call (group commit), and a one-command pipeline per turn
 * would only add its own cost.
 * `worker`: what BullMQ workers need (`maxRetriesPerRequest: null`), keeps
 * retrying through outages.
 */
export type ConnectionRole = 'producer' | 'worker' | 'command';

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

const CLUSTER_URL = /^(rediss?)\+cluster:\/\/(?:([^:@/]*):?([^@/]*)@)?([^/]+)\/?$/;

/**
 * Cluster seed nodes from `redis+cluster://[user:pass@]h1:7000,h2:7001`
 * (`rediss+cluster://` for TLS), or null when the URL is not a cluster URL.
 * On Cluster, QUEUE_PREFIX must be hash-tagged (`{switchyard}`) so every key
 * Switchyard and BullMQ use lands in one slot (multi-key Lua scripts need it).
 */
export function clusterFromUrl(url: string): { nodes: { host: string; port: number }[]; redisOptions: RedisOptions } | null {
  const m = CLUSTER_URL.exec(url);
  if (!m) return null;
  const nodes = (m[4] as string).split(',').map((hp) => {
    const [host, port] = hp.split(':');
    return { host: host as string, port: port ? Number(port) : 6379 };
  });
  return {
    nodes,
    redisOptions: {
      ...(m[2] ? { username: decodeURIComponent(m[2]) } : {}),
      ...(m[3] ? { password: decodeURIComponent(m[3]) } : {}),
      ...(m[1] === 'rediss' ? { tls: {} } : {}),
    },
  };
}

/** A one-shot command gives up after three reconnects (200, 400, 600 ms), so a CLI fails fast. */
const commandRetry = (times: number): number | null => (times > 3 ? null : 200 * times);
/** A worker keeps reconnecting, backing off to 2 s. */
const workerRetry = (times: number): number => Math.min(100 * times, 2_000);

/** How a connection sends its commands. */
export interface ConnectionOptions {
  /**
   * ioredis auto-pipelining: the commands issued in one event-loop turn go out in one write (order kept).
   * For a process's own command connection, where many jobs at once each send a command or a script;
   * never for BullMQ's connections (its maintainers advise against it) nor for one that blocks.
   */
  readonly autoPipeline?: boolean;
  /**
   * Commands (a script by its name) an auto-pipelined connection sends at once, each in its own write: for
   * callers that gather a turn's worth into one call themselves, for which the turn's pipeline would only add
   * its own cost (an ioredis Pipeline object and a wait for the next turn).
   */
  readonly unpipelined?: readonly string[];
}

/** Opens an ioredis connection (or Cluster client) for the given role. */
export function createRedisConnection(url: string, role: ConnectionRole, name?: string, opts: ConnectionOptions = {}): RedisClient {
  const cluster = clusterFromUrl(url);
  const pipelining = opts.autoPipeline
    ? { enableAutoPipelining: true, ...(opts.unpipelined ? { autoPipeliningIgnoredCommands: [...opts.unpipelined] } : {}) }
    : {};
  if (cluster) return createCluster(cluster, role, name, pipelining);
  const base = redisOptionsFromUrl(url);
  const roleOptions: Record<ConnectionRole, RedisOptions> = {
    producer: {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 1_000,
      commandTimeout: 1_000,
      retryStrategy: (times) => Math.min(50 * times, 500),
      lazyConnect: false,
    },
    worker: {
      maxRetriesPerRequest: null,
      enableReadyCheck: true,
      retryStrategy: workerRetry,
      lazyConnect: false,
    },
    command: {
      maxRetriesPerRequest: 2,
      connectTimeout: COMMAND_TIMEOUT_MS,
      retryStrategy: commandRetry,
      lazyConnect: true,
    },
  };
  return new Redis({ ...base, ...roleOptions[role], ...pipelining, ...(name ? { connectionName: name } : {}) });
}

const COMMAND_TIMEOUT_MS = 5_000;

function createCluster(
  c: NonNullable<ReturnType<typeof clusterFromUrl>>,
  role: ConnectionRole,
  name: string | undefined,
  pipelining: { enableAutoPipelining?: boolean; autoPipeliningIgnoredCommands?: string[] },
): Cluster {
  const perNode: Record<ConnectionRole, RedisOptions> = {
    producer: { ...c.redisOptions, connectTimeout: 1_000, commandTimeout: 1_000, maxRetriesPerRequest: 1 },
    worker: { ...c.redisOptions, maxRetriesPerRequest: null },
    command: { ...c.redisOptions, connectTimeout: COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 2 },
  };
  const options: ClusterOptions = {
    redisOptions: { ...perNode[role], ...(name ? { connectionName: name } : {}) },
    enableOfflineQueue: role !== 'producer',
    clusterRetryStrategy: role === 'command' ? commandRetry : workerRetry,
    lazyConnect: role === 'command',
    ...pipelining,
  };
  return new Cluster(c.nodes, options);
}

/**
 * Sends one command at once in its own write, also on an auto-pipelined connection (whose other commands
 * wait for the turn's pipeline): for a caller that gathers a turn's worth into this one command itself.
 */
export function sendNow(redis: RedisClient, name: string, args: readonly (string | number)[]): Promise<unknown> {
  const command = new Command(name, [...args], { replyEncoding: 'utf8', keyPrefix: redis.options.keyPrefix });
  void redis.sendCommand(command);
  return command.promise;
}

/** A Redis a one-shot command could not reach; the message names the URL (password masked) and why. */
export class RedisUnreachableError extends Error {
  readonly code = 'redis_unreachable';
  constructor(message: string) {
    super(message);
    this.name = 'RedisUnreachableError';
  }
}

/**
 * Opens and checks (PING) a `command` connection to any REDIS_URL form
 * (standalone, TLS, Sentinel, Cluster), or throws RedisUnreachableError
 * within about `timeoutMs`.
 */
export async function connectForCommand(url: string, name = 'switchyard-cli', timeoutMs = COMMAND_TIMEOUT_MS): Promise<RedisClient> {
  const redis = createRedisConnection(url, 'command', name);
  redis.on('error', () => {
    /* reported by connect() below */
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      (async () => {
        await redis.connect();
        await redis.ping();
      })(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    redis.disconnect();
    throw new RedisUnreachableError(`cannot reach Redis at ${maskRedisUrl(url)}: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
  return redis;
}

/** Closes a connection, falling back to disconnect when QUIT cannot be sent. */
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === 'end') return;
  try {
    await Promise.race([redis.quit(), sleep(1_000)]);
  } catch {
    /* already closed or unreachable: disconnect below */
  }
  redis.disconnect();
}

/**
 * Connections opened for others that do not close them (a BullMQ Worker given a
 * connection leaves closing it to its owner): `connect` opens one, `close` closes
 * every one opened so far.
 */
export function ownedConnections(url: string, role: ConnectionRole): { connect(name: string): RedisClient; close(): Promise<void> } {
  const owned: RedisClient[] = [];
  return {
    connect(name) {
      const c = createRedisConnection(url, role, name);
      owned.push(c);
      return c;
    },
    async close() {
      await Promise.allSettled(owned.map((c) => closeRedis(c)));
    },
  };
}
