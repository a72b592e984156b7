import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';

/** URL of the shared test redis-server started by the global setup. */
export function testRedisUrl(): string {
  return inject('redisUrl');
}

/** A queue prefix no other test uses, so tests share one Redis without colliding. */
export function uniquePrefix(label = 't'): string {
  return `sy-${label}-${randomBytes(4).toString('hex')}`;
}
