import { randomUUID } from 'node:crypto';

/** What a key generator is told about the write it keys. */
export interface IdempotencyContext {
  /** Operation name, e.g. `messages.send`. */
  op: string;
  method: string;
  /** Request path below the base URL. */
  path: string;
}

/**
 * Makes the Idempotency-Key of a write that the caller did not key. Called once
 * per logical call; the key is re-sent unchanged on every retry of that call.
 * The worker injects a deterministic generator (delivery, handler, step).
 */
export type IdempotencyKeyGenerator = (ctx: IdempotencyContext) => string;

/** Default: a random UUID per call (the service remembers keys for 24 hours). */
export const randomIdempotencyKey: IdempotencyKeyGenerator = () => randomUUID();
