import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type Config } from '../config.js';
import { connectForCommand, type RedisClient } from '../redis/connection.js';
import { IngestStore } from '../queue/ingest.js';
import { directTarget, httpTarget, type ReplayTarget } from '../replay/index.js';
import { UsageError, type CliIo } from './command.js';
import { secretFlag, urlFlag } from './flags.js';

/** The configuration of a one-shot command (a ConfigError reaches main.ts: every problem printed, exit 1). */
export function cliConfig(io: CliIo): Config {
  return loadConfig(io.env, { requireSecrets: false });
}

/**
 * The Redis a one-shot command (dlq, send/replay --direct) should use:
 * REDIS_URL, else the URL a running `switchyard start` with a managed
 * redis-server left in `<SWITCHYARD_HOME>/redis.url`, else null.
 */
export function cliRedisUrl(config: Pick<Config, 'redisUrl' | 'stateDir'>): string | null {
  if (config.redisUrl) return config.redisUrl;
  try {
    const url = readFileSync(join(config.stateDir, 'redis.url'), 'utf8').trim();
    return url || null;
  } catch {
    return null;
  }
}

/**
 * Connects to the Redis of the receivers and workers through the one
 * connection factory (every REDIS_URL form: standalone, TLS, Sentinel,
 * Cluster); `missing` says what to set when there is no URL at all.
 */
export async function cliRedis(config: Config, missing: string): Promise<RedisClient> {
  const url = cliRedisUrl(config);
  if (!url) throw new UsageError(missing);
  return connectForCommand(url);
}

/** Where `send` and `replay` deliver, and how to let go of it. */
export interface DeliveryTarget {
  readonly target: ReplayTarget;
  close(): Promise<void>;
}

/**
 * `--direct`: into Redis with the receiver's dedupe; else signed HTTP POSTs to
 * `--to` (default the local receiver of PORT and WEBHOOK_PATH).
 */
export async function deliveryTarget(config: Config, flags: { direct: boolean; to?: string | undefined; secret?: string | undefined; concurrency?: number }): Promise<DeliveryTarget> {
  if (flags.direct) {
    if (flags.to !== undefined) throw new UsageError('--to applies to HTTP delivery only (not with --direct)');
    const redis = await cliRedis(config, '--direct needs REDIS_URL (the Redis your receiver and workers use)');
    return {
      target: directTarget(new IngestStore(redis, config.queuePrefix, config.dedupeTtlMs)),
      close: async () => { redis.disconnect(); },
    };
  }
  const target = httpTarget({
    url: urlFlag('to', flags.to ?? `http://127.0.0.1:${config.port}${config.webhookPath}`),
    secret: secretFlag(flags.secret, config), signatureHeader: config.signatureHeader,
    ...(flags.concurrency ? { maxSockets: flags.concurrency } : {}),
  });
  return { target, close: async () => target.close() };
}
