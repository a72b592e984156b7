import type { Logger } from '../log/index.js';
import type { DeliverySink, StoredDelivery } from '../queue/index.js';
import type { DiskSpool } from './spool.js';

/**
 * Redis first; when Redis cannot take the delivery, the fsync'd disk spool
 * (answered 202 `spooled`). Duplicates cannot be recognised while Redis is
 * away, so a repeat may be spooled twice; the drainer's dedupe absorbs it.
 * A full spool throws, and the route answers 503 with Retry-After.
 */
export function spoolingSink(redis: DeliverySink, spool: DiskSpool, log: Logger): DeliverySink {
  return {
    async put(delivery: StoredDelivery, raw?: Uint8Array) {
      try {
        return await redis.put(delivery, raw);
      } catch (err) {
        spool.append(delivery);
        log.warn({ delivery: delivery.key, err: String(err) }, 'Redis unavailable: delivery spooled to disk');
        return 'spooled';
      }
    },
  };
}
