import { createHash } from 'node:crypto';
import type { StoredDelivery } from '../../queue/index.js';
import { reconcileDeliveryKey } from '../../events/index.js';
import type { Inferred } from './infer.js';

export { reconcileDeliveryKey };

/**
 * The delivery reconcile stores for an inferred event: the envelope the
 * sandbox and the service send (`{id, event, created_at, data}`, the id derived
 * from the change key), marked `source: 'reconcile'`. It goes through the same
 * IngestStore as a webhook, so the pump, fan-out and history treat it alike.
 */
export function synthesize(e: Inferred, receivedAt: string, world: string | null = null): StoredDelivery {
  // A change inferred from the snapshot names when its state before was last seen: another change of the same key is another delivery.
  const key = reconcileDeliveryKey(e.changeKey, world, e.afterMs ?? null);
  const id = `rc_${createHash('sha256')
    .update(world === null ? e.changeKey : key)
    .digest('hex')
    .slice(0, 32)}`;
  const body = JSON.stringify({ id, event: e.event, ...(e.at ? { created_at: e.at } : {}), data: e.data });
  return { key, name: e.event, receivedAt, secretIndex: -1, body, headers: {}, source: 'reconcile' };
}
