import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/connection.js';

/**
 * The world a worker's changes belong to. Change claims and reconciled
 * delivery keys are named by record ids, which only mean one thing inside one
 * workspace's life: a fresh sandbox (`switchyard dev` starts one each time)
 * issues the same ids again, so claims made against the last one would skip
 * the new one's changes. Whoever starts such a world marks it here, under the
 * API URL it serves; workers and reconcile of that URL read the mark and keep
 * their claims under it. A real workspace is never re-made: no mark, and the
 * claims keep their plain names.
 */
export function worldMarkKey(prefix: string, apiUrl: string): string {
  return `${prefix}:world:${createHash('sha256').update(apiUrl.replace(/\/+$/, '')).digest('hex').slice(0, 16)}`;
}

/** A name for a world that starts now (a fresh sandbox). */
export function newWorldName(kind = 'sandbox'): string {
  return `${kind}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** Marks `world` as the current one of the API at `apiUrl` (until the next mark: a few bytes). */
export async function markWorld(redis: RedisClient, prefix: string, apiUrl: string, world: string): Promise<void> {
  await redis.set(worldMarkKey(prefix, apiUrl), world);
}

/** The current world of the API at `apiUrl`, or null (a real workspace: claims under their plain names). */
export async function currentWorld(redis: RedisClient, prefix: string, apiUrl: string | undefined): Promise<string | null> {
  if (!apiUrl) return null;
  return redis.get(worldMarkKey(prefix, apiUrl));
}
