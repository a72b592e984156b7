import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/index.js';

/**
 * The world a worker's changes belong to. Change claims and reconciled
 * delivery keys are named by record ids, which only mean one thing inside one
 * workspace's life: a fresh sandbox (`switchyard dev` starts one each time)
 * issues the same ids again, so claims made against the last one would skip
 * the new one's changes. Whoever starts such a world marks it here, under the
 * API URL it serves, with the time it began; workers and reconcile of that URL
 * read the mark and keep their claims under it. A delivery received before the
 * mark belongs to the world before it (the backlog a restarted `dev` finds in
 * Redis). A real workspace is never re-made: no mark, and the claims keep
 * their plain names.
 */
export interface World {
  readonly name: string;
  /** When it began (ms): deliveries received before it belong to `previous`. */
  readonly since: number;
  /** The world before it; null: the plain names. */
  readonly previous: string | null;
}

export function worldMarkKey(prefix: string, apiUrl: string): string {
  return `${prefix}:world:${createHash('sha256').update(apiUrl.replace(/\/+$/, '')).digest('hex').slice(0, 16)}`;
}

/** A name for a world that starts now (a fresh sandbox). */
export function newWorldName(kind = 'sandbox'): string {
  return `${kind}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** The current world of the API at `apiUrl`, or null (a real workspace: claims under their plain names). */
export async function readWorld(redis: RedisClient, prefix: string, apiUrl: string | undefined): Promise<World | null> {
  if (!apiUrl) return null;
  const raw = await redis.get(worldMarkKey(prefix, apiUrl));
  if (raw === null) return null;
  try {
    const w = JSON.parse(raw) as Partial<World>;
    if (typeof w.name === 'string' && typeof w.since === 'number')
      return { name: w.name, since: w.since, previous: typeof w.previous === 'string' ? w.previous : null };
  } catch {
    // A bare name (never written by this version): a world with no before.
  }
  return { name: raw, since: 0, previous: null };
}

/** Marks `name` as the current world of the API at `apiUrl`, beginning now (kept until the next mark: a few bytes). */
export async function markWorld(redis: RedisClient, prefix: string, apiUrl: string, name: string, now = Date.now()): Promise<World> {
  const before = await readWorld(redis, prefix, apiUrl);
  const world: World = { name, since: now, previous: before?.name ?? null };
  await redis.set(worldMarkKey(prefix, apiUrl), JSON.stringify(world));
  return world;
}

/** Which world's names a delivery received at `receivedAtMs` (null: now) is claimed under. */
export function worldAt(world: World | null, receivedAtMs: number | null): string | null {
  if (world === null) return null;
  return receivedAtMs !== null && receivedAtMs < world.since ? world.previous : world.name;
}

/** Where change claims learn their world. */
export interface WorldSource {
  current(): Promise<World | null>;
}

/** A fixed world (tests; a one-shot command that read the mark once). */
export function fixedWorld(world: World | string | null): WorldSource {
  const w = typeof world === 'string' ? { name: world, since: 0, previous: null } : world;
  return { current: async () => w };
}

/**
 * The mark of one API URL as a long-running worker sees it: read again at
 * most every `refreshMs`, so a `work` process next to a restarted `dev`
 * follows the new world within seconds.
 */
export class WorldMark implements WorldSource {
  private cached: { at: number; world: Promise<World | null> } | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly apiUrl: string | undefined,
    private readonly refreshMs = 5_000,
  ) {}

  current(): Promise<World | null> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at >= this.refreshMs) {
      const world = readWorld(this.redis, this.prefix, this.apiUrl);
      this.cached = { at: now, world };
      world.catch(() => {
        this.cached = undefined;
      });
    }
    return this.cached.world;
  }
}
