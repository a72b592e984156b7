import type { Logger } from '../log/index.js';
import { type RedisClient, maskRedisUrl } from '../redis/index.js';

export interface RedisWatchOptions {
  /** The REDIS_URL in use; logged with its password masked. */
  url: string;
  log: Logger;
  /** First repeat of the warning after this long; doubles up to `maxEveryMs`. */
  firstRepeatMs?: number;
  maxEveryMs?: number;
  now?: () => number;
}

export interface RedisWatch {
  /** True while the connection is known to be down. */
  readonly down: boolean;
  close(): void;
}

/**
 * Says, at `warn`, that Redis cannot be reached: at the first failed attempt
 * and then again with back-off (5 s, 10 s, … every minute at most) while it
 * stays away, and at `info` when it answers again. The reconnecting itself is
 * ioredis's; this only makes an outage visible instead of a silent hang.
 */
export function watchRedis(client: RedisClient, opts: RedisWatchOptions): RedisWatch {
  const now = opts.now ?? Date.now;
  const redis = maskRedisUrl(opts.url);
  const firstRepeat = opts.firstRepeatMs ?? 5_000;
  const maxEvery = opts.maxEveryMs ?? 60_000;
  let downSince: number | undefined;
  let nextWarnAt = 0;
  let every = firstRepeat;

  const onError = (err: Error & { code?: string }) => {
    const t = now();
    const reason = err.code && !err.message.includes(err.code) ? `${err.code} ${err.message}` : err.message;
    if (downSince === undefined) {
      downSince = t;
      every = firstRepeat;
    } else if (t < nextWarnAt) {
      return;
    } else {
      every = Math.min(every * 2, maxEvery);
    }
    nextWarnAt = t + every;
    const downFor = Math.round((t - downSince) / 1000);
    opts.log.warn(
      { redis, reason, down_s: downFor },
      `Redis at ${redis} is unreachable (${reason}); retrying, next notice in ${Math.round(every / 1000)} s`,
    );
  };
  const onReady = () => {
    if (downSince === undefined) return;
    opts.log.info({ redis, down_s: Math.round((now() - downSince) / 1000) }, `Redis at ${redis} is reachable again`);
    downSince = undefined;
  };
  client.on('error', onError);
  client.on('ready', onReady);
  return {
    get down() {
      return downSince !== undefined;
    },
    close() {
      client.off('error', onError);
      client.off('ready', onReady);
    },
  };
}

/**
 * Resolves 'ready' once the client can take commands, or 'unreachable' as soon
 * as its first attempt fails (it keeps retrying; `whenReady` waits for that).
 */
export function firstAttempt(client: RedisClient): Promise<'ready' | 'unreachable'> {
  if (client.status === 'ready') return Promise.resolve('ready');
  return new Promise((resolve) => {
    const done = (v: 'ready' | 'unreachable') => {
      client.off('ready', onReady);
      client.off('error', onFail);
      client.off('close', onFail);
      resolve(v);
    };
    const onReady = () => done('ready');
    const onFail = () => done('unreachable');
    client.once('ready', onReady);
    client.once('error', onFail);
    client.once('close', onFail);
  });
}

/** Resolves when the client is ready; rejects with the signal's reason if it aborts first. */
export function whenReady(client: RedisClient, signal: AbortSignal): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    const onAbort = () => {
      client.off('ready', onReady);
      reject(signal.reason);
    };
    if (signal.aborted) return reject(signal.reason);
    client.once('ready', onReady);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
