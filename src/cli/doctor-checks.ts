import { spawnSync } from 'node:child_process';
import { type ApiClient, ApiError } from '../api/index.js';
import type { Config } from '../config/index.js';
import { type Handler, HandlerSettingsError, type Schedule, parseSettings } from '../handler/index.js';
import { cancelCommandFor, orphanedRuns, RunRecords } from '../queue/index.js';
import { redisWarnings, closeRedis, createRedisConnection, type RedisClient } from '../redis/index.js';

/** One line of the doctor's report. */
export interface Check {
  readonly name: string;
  readonly status: 'ok' | 'warn' | 'fail';
  readonly detail: string;
  /** What to do about a warn or fail. */
  readonly fix?: string;
  /** The workspace it is of, in a deployment of many (WORKSPACES_FILE). */
  readonly workspace?: string;
}

/** Resolves once the connection is ready, or fails after 3 s. */
function ready(redis: RedisClient): Promise<void> {
  return new Promise<void>((res, rej) => {
    if (redis.status === 'ready') return res();
    const t = setTimeout(() => rej(new Error('no answer within 3 s')), 3_000);
    redis.once('ready', () => {
      clearTimeout(t);
      res();
    });
  });
}

/** Redis: reachable, version (BullMQ needs ≥ 5), eviction off, persistence on. */
export async function checkRedis(config: Config, which: (bin: string) => string | null = whichBinary): Promise<Check[]> {
  if (!config.redisUrl) {
    const bin = which('redis-server');
    return bin
      ? [
          {
            name: 'redis',
            status: 'ok',
            detail: `REDIS_URL unset: a managed redis-server (${bin}) is started under ${config.stateDir}/redis with AOF and noeviction`,
          },
        ]
      : [
          {
            name: 'redis',
            status: 'fail',
            detail: 'REDIS_URL is unset and redis-server is not installed',
            fix: 'apt-get install -y redis-server, or set REDIS_URL',
          },
        ];
  }
  const redis = createRedisConnection(config.redisUrl, 'producer', 'switchyard-doctor');
  redis.on('error', () => undefined);
  try {
    await ready(redis);
    const info = await redis.info('server');
    const version = /redis_version:([\d.]+)/.exec(info)?.[1] ?? 'unknown';
    const major = Number(version.split('.')[0]);
    const checks: Check[] = [
      {
        name: 'redis',
        status: major >= 5 ? 'ok' : 'fail',
        detail: `reachable, version ${version}`,
        ...(major >= 5 ? {} : { fix: 'BullMQ needs Redis 5 or later' }),
      },
    ];
    for (const w of await redisWarnings(redis)) checks.push({ name: 'redis settings', status: 'warn', detail: w });
    return checks;
  } catch (err) {
    return [
      {
        name: 'redis',
        status: 'fail',
        detail: `cannot reach REDIS_URL: ${(err as Error).message}`,
        fix: 'check REDIS_URL, network and credentials',
      },
    ];
  } finally {
    await closeRedis(redis);
  }
}

/**
 * Parked runs (in the Redis at `redisUrl`: REDIS_URL, or the managed one of a `dev`/`start` running in this
 * project): those of a handler that no module of HANDLERS_DIR defines any more (`defined`: every handler id of
 * the directory, whatever HANDLERS narrows) are warned about, one line per handler, with the command that
 * cancels them: nothing will run them. Nothing is said without a Redis or when it does not answer (the redis
 * check says so).
 */
export async function checkParkedRuns(config: Config, defined: readonly string[], redisUrl: string | null): Promise<Check[]> {
  if (!redisUrl) return [];
  const redis = createRedisConnection(redisUrl, 'producer', 'switchyard-doctor');
  redis.on('error', () => undefined);
  try {
    await ready(redis);
    const source = { redis, prefix: config.queuePrefix };
    const [parked, orphans] = await Promise.all([new RunRecords(redis, config.queuePrefix).count(), orphanedRuns(source, defined)]);
    if (orphans.length === 0) {
      return [{ name: 'parked runs', status: 'ok', detail: `${parked} parked in a sleep or wait, each of a handler HANDLERS_DIR defines` }];
    }
    const counts = new Map<string, number>();
    for (const r of orphans) counts.set(r.handler, (counts.get(r.handler) ?? 0) + 1);
    return [...counts].map(([handler, n]) => ({
      name: `parked runs of ${handler}`,
      status: 'warn',
      detail:
        `${n} run${n === 1 ? ' is' : 's are'} parked for handler "${handler}", which no module in ${config.handlersDir} defines ` +
        `(removed or renamed): nothing will run ${n === 1 ? 'it' : 'them'}`,
      fix: `cancel ${n === 1 ? 'it' : 'them'}: ${cancelCommandFor(handler)} (\`switchyard waits --handler ${handler}\` lists ${n === 1 ? 'it' : 'them'})`,
    }));
  } catch {
    return [];
  } finally {
    await closeRedis(redis);
  }
}

/** A handler or a schedule, as the doctor names it (`handler <id>`, `schedule <id>`). */
type Unit = {
  readonly what: 'handler' | 'schedule';
  readonly id: string;
  readonly abilities: readonly string[];
  readonly settings: Handler['settings'];
};

const units = (handlers: readonly Handler[], schedules: readonly Schedule[]): Unit[] => [
  ...handlers.map((h): Unit => ({ what: 'handler', id: h.id, abilities: h.abilities, settings: h.settings })),
  ...schedules.map((s): Unit => ({ what: 'schedule', id: s.id, abilities: s.abilities, settings: s.settings })),
];

/** API token: `GET /me` answers, and its abilities cover what the loaded handlers and schedules declare. */
export async function checkApi(
  config: Config,
  handlers: readonly Handler[],
  api: ApiClient | undefined,
  schedules: readonly Schedule[] = [],
): Promise<Check[]> {
  if (!api) {
    const calls = handlers.length + schedules.length > 0;
    return [
      {
        name: 'api',
        status: calls ? 'fail' : 'warn',
        detail: 'WORKSPACE_API_URL and WORKSPACE_API_TOKEN are not both set',
        fix: 'set WORKSPACE_API_URL (…/api/v1) and WORKSPACE_API_TOKEN (or WORKSPACE_API_TOKEN_FILE)',
      },
    ];
  }
  let abilities: readonly string[];
  try {
    const me = await api.me();
    abilities = me.abilities;
  } catch (err) {
    const code = err instanceof ApiError ? err.code : 'network_error';
    return [
      {
        name: 'api',
        status: 'fail',
        detail: `GET /me failed (${code}): ${(err as Error).message}`,
        fix:
          code === 'token_expired' || code === 'unauthorized'
            ? `create a new token in the workspace developer settings${config.workspaces ? ` and give it to workspace ${config.workspaceId} in ${config.workspacesFile}` : ''}`
            : `check ${config.workspaces ? `the apiUrl of workspace ${config.workspaceId}` : 'WORKSPACE_API_URL'} and the network`,
      },
    ];
  }
  const checks: Check[] = [
    { name: 'api', status: 'ok', detail: `token accepted (${config.workspaceApiUrl}); abilities: ${abilities.join(', ') || 'none'}` },
  ];
  for (const u of units(handlers, schedules)) {
    const missing = u.abilities.filter((a) => !abilities.includes(a));
    checks.push(
      missing.length === 0
        ? { name: `${u.what} ${u.id}`, status: 'ok', detail: `abilities covered (${u.abilities.join(', ') || 'none declared'})` }
        : {
            name: `${u.what} ${u.id}`,
            status: 'fail',
            detail: `the token lacks ${missing.join(', ')}`,
            fix: 'create a token with those abilities (abilities are fixed at creation)',
          },
    );
  }
  return checks;
}

/**
 * Settings: each handler and schedule with a `settings` schema parses it from
 * `env` (without Switchyard's own secrets) as the worker will at start-up
 * (a bad setting of either stops it).
 */
export function checkSettings(
  handlers: readonly Handler[],
  env: Readonly<Record<string, string | undefined>>,
  schedules: readonly Schedule[] = [],
): Check[] {
  return units(handlers, schedules).flatMap((u): Check[] => {
    if (!u.settings) return [];
    const names = Object.keys(u.settings.shape).join(', ');
    try {
      parseSettings(u.id, u.settings, env);
      return [{ name: `${u.what} ${u.id} settings`, status: 'ok', detail: `valid (${names})` }];
    } catch (err) {
      if (!(err instanceof HandlerSettingsError)) throw err;
      return [
        {
          name: `${u.what} ${u.id} settings`,
          status: 'fail',
          detail: err.problems.map((p) => p.problem).join('; '),
          fix:
            u.what === 'handler'
              ? 'set them in the environment of every process that runs this handler (the worker will not start without them)'
              : 'set them in the environment of every worker process (each runs the schedules; the worker will not start without them)',
        },
      ];
    }
  });
}

function whichBinary(bin: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}
