import { createHash } from 'node:crypto';
import { handlerQueueList, type HandlerQueues } from './queues.js';
import type { RedisClient } from '../redis/index.js';
import type { Logger } from '../log/index.js';

/** Why the handler queues are paused (an unusable API token), as stored in Redis. */
export interface PauseRecord {
  readonly reason: string;
  readonly code: string;
  readonly at: string;
  /** SHA-256 of the token that failed (never the token), so a restart with a new token resumes. */
  readonly tokenHash: string | null;
}

export const tokenHash = (token: string | undefined): string | null =>
  token ? createHash('sha256').update(token).digest('hex').slice(0, 16) : null;

const key = (prefix: string) => `${prefix}:paused:handlers`;

/**
 * Pauses the handler queues of every priority for every worker (BullMQ's
 * global pause) and records why. Jobs stay where they are; nothing is failed
 * or dropped.
 */
export async function pauseHandlers(redis: RedisClient, queues: HandlerQueues, prefix: string, record: PauseRecord): Promise<boolean> {
  const first = await redis.set(key(prefix), JSON.stringify(record), 'NX');
  await Promise.all(handlerQueueList(queues).map((q) => q.pause()));
  return first === 'OK';
}

export async function pauseState(redis: RedisClient, prefix: string): Promise<PauseRecord | null> {
  const raw = await redis.get(key(prefix));
  return raw ? (JSON.parse(raw) as PauseRecord) : null;
}

/** Resumes the handler queues and clears the recorded reason. */
export async function resumeHandlers(redis: RedisClient, queues: HandlerQueues, prefix: string): Promise<PauseRecord | null> {
  const record = await pauseState(redis, prefix);
  await Promise.all(handlerQueueList(queues).map((q) => q.resume()));
  await redis.del(key(prefix));
  return record;
}

/**
 * At a worker's start: handler queues paused for an unusable token are resumed when a different token is
 * configured now (`current`, its hash); still paused, they are said at `error` with what to do.
 */
export async function resumeIfTokenChanged(
  redis: RedisClient,
  queue: HandlerQueues,
  prefix: string,
  current: string | null,
  log: Logger,
): Promise<void> {
  const paused = await pauseState(redis, prefix);
  if (paused && paused.tokenHash !== current && current !== null) {
    await resumeHandlers(redis, queue, prefix);
    log.warn({ was: paused.code }, 'handler queues were paused for an unusable API token; a different token is configured now, resuming');
  } else if (paused) {
    log.error(
      { reason: paused.reason, since: paused.at },
      'handler queues are paused; replace the API token and restart, or run `switchyard dlq resume`',
    );
  }
}
