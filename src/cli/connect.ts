import type { Redis } from 'ioredis';
import { loadConfig, type Config } from '../config.js';
import { cliRedisUrl, connectCliRedis } from '../queue/dlq.js';
import { IngestStore } from '../queue/ingest.js';
import { directTarget, httpTarget, type ReplayTarget } from '../replay/index.js';
import { UsageError, type CliIo } from './command.js';
import { secretFlag, urlFlag } from './flags.js';

/** The configuration of a one-shot command (a ConfigError reaches main.ts: every problem printed, exit 1). */
export function cliConfig(io: CliIo): Config {
  return loadConfig(io.env, { requireSecrets: false });
}

/**
 * Connects to the Redis of the receivers and workers (REDIS_URL, else a
 * running `switchyard start`'s managed one); `missing` says what to set.
 */
export async function cliRedis(config: Config, missing: string): Promise<Redis> {
  const url = cliRedisUrl(config);
  if (!url) throw new UsageError(missing);
  return connectCliRedis(url);
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
