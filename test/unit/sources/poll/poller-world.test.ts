/** A fresh sandbox (a new world) reuses order ids: its poller state and derived delivery keys are its own. */
import { describe, expect, it } from 'vitest';
import { derivedDelivery } from '../../../../src/sources/poll/diff.js';
import { pollKeys } from '../../../../src/sources/poll/poller.js';

const order = { key: 'order.created:7', name: 'order.created' as const, createdAt: '2026-11-20T10:00:00.000Z', data: { id: 7 } };

describe('the poller in a world', () => {
  it('keeps its cursor and snapshot under the world (a new world takes a baseline of its own); the lock is shared', () => {
    const plain = pollKeys('sy');
    const a = pollKeys('sy', 'sandbox-a');
    const b = pollKeys('sy', 'sandbox-b');
    expect(plain.ordersCursor).toBe('sy:poll:orders:cursor');
    expect(a.ordersCursor).toBe('sy:poll:@sandbox-a:orders:cursor');
    for (const name of ['ordersCursor', 'ordersSeen', 'ordersSettled', 'tasksSeen', 'tasksBaseline', 'clockOffset'] as const) {
      expect(new Set([plain[name], a[name], b[name]]).size).toBe(3);
    }
    expect(a.lock).toBe(plain.lock);
  });

  it("names derived deliveries by world, so order 7 of a new sandbox is not an ingest duplicate of the last one's", () => {
    const at = '2026-11-20T10:00:01.000Z';
    expect(derivedDelivery(order as never, at).key).toBe('order.created:7');
    expect(derivedDelivery(order as never, at, 'sandbox-b').key).toBe('@sandbox-b:order.created:7');
  });
});
