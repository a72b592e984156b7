import type { RedisClient } from '../redis/index.js';
/**
 * Where `ctx.step` results live: one entry per (delivery, handler, step name).
 * A stored result is returned on every later attempt, so a step's writes
 * happen once even after the API's 24-hour idempotency memory has passed.
 */
export interface StepStore {
  /** The stored JSON text of a step, or null when it never completed. */
  get(scope: string, step: string): Promise<string | null>;
  set(scope: string, step: string, json: string): Promise<void>;
}

/** Redis-backed steps; entries expire after `ttlMs` (longer than any retry horizon). */
export class RedisStepStore implements StepStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  private key(scope: string, step: string): string {
    return `${this.prefix}:step:${scope}:${step}`;
  }

  get(scope: string, step: string): Promise<string | null> {
    return this.redis.get(this.key(scope, step));
  }

  async set(scope: string, step: string, json: string): Promise<void> {
    await this.redis.set(this.key(scope, step), json, 'PX', this.ttlMs);
  }
}

/** In-process steps: `replay --inline` and tests that need no Redis. */
export class MemoryStepStore implements StepStore {
  private readonly entries = new Map<string, string>();

  async get(scope: string, step: string): Promise<string | null> {
    return this.entries.get(`${scope}\u0000${step}`) ?? null;
  }

  async set(scope: string, step: string, json: string): Promise<void> {
    this.entries.set(`${scope}\u0000${step}`, json);
  }
}
