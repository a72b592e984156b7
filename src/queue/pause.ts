import { createHash } from 'node:crypto';
import { handlerQueueList, type HandlerQueues } from './queues.js';
import type { RedisClient } from '../redis/index.js';

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
