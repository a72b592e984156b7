import { describe, expect, it } from 'vitest';
import { validateEvent } from '../../../../src/events/catalogue.js';
import { parseEnvelope } from '../../../../src/events/envelope.js';
import { deliveryBytes } from '../../../../src/queue/delivery.js';
import type { DerivedEventName } from '../../../../src/events/catalogue.js';
import {
  decodeSeen,
  derivedDelivery,
  diffOrders,
  diffTasks,
  encodeSeen,
  SOURCE_HEADER,
  type SeenOrder,
} from '../../../../src/sources/poll/diff.js';
import type { Order } from '../../../../src/spec/schemas/order.js';
import type { Task } from '../../../../src/spec/schemas/task.js';

const ALL = new Set<DerivedEventName>(['order.created', 'order.status_changed']);
const order = (id: number, status: Order['status'], updated: string, created = '2025-03-06T10:00:00.000Z'): Order => ({
  id,
  number: id,
  contact_id: 35,
  conversation_id: null,
  deal_id: null,
  owner_id: null,
  status,
  source: 'api',
  payment: { method: 'cod', status: 'unpaid', reference: null, paid_at: null },
  delivery: { address: null, city: null, area: null, fee: '0.00' },
  items: [],
  subtotal: '1.00',
  discount: '0.00',
  total: '1.00',
  notes: null,
  external_id: null,
  confirmed_at: null,
  delivered_at: null,
  cancelled_at: null,
  cancel_reason: null,
  created_at: created,
  updated_at: updated,
});
const task = (id: number, due: string): Task => ({
  id,
  title: 't',
  description: null,
  type: 'todo',
  status: 'open',
  due_at: due,
  completed_at: null,
  assignee_id: 20,
  created_by: 20,
  contact_id: null,
});
const seen = (entries: [number, SeenOrder][]) => new Map<number, SeenOrder | undefined>(entries);

describe('diffOrders', () => {
  it('an order never seen is order.created; one already moved on is also a change from new', () => {
    const d = diffOrders(seen([]), [order(2, 'confirmed', '2025-03-06T10:05:00.000Z'), order(1, 'new', '2025-03-06T10:00:00.000Z')], ALL);
    expect(d.events.map((e) => [e.name, e.key])).toEqual([
      ['order.created', 'order.created:1'],
      ['order.created', 'order.created:2'],
      ['order.status_changed', 'order.status_changed:2:2025-03-06T10:05:00.000Z:confirmed'],
    ]);
    expect(d.events[2]?.data).toMatchObject({ id: 2, status: 'confirmed', previous_status: 'new' });
    expect(d.cursor).toBe('2025-03-06T10:05:00.000Z');
    expect([...d.seen.keys()].sort()).toEqual([1, 2]);
  });

  it('a status that differs from the one seen is order.status_changed with previous_status, created at updated_at', () => {
    const d = diffOrders(
      seen([[1, { status: 'confirmed', updatedAt: '2025-03-06T10:01:00.000Z' }]]),
      [order(1, 'preparing', '2025-03-06T10:02:00.000Z')],
      ALL,
    );
    expect(d.events).toEqual([
      {
        key: 'order.status_changed:1:2025-03-06T10:02:00.000Z:preparing',
        name: 'order.status_changed',
        createdAt: '2025-03-06T10:02:00.000Z',
        data: expect.objectContaining({ status: 'preparing', previous_status: 'confirmed' }) as unknown,
      },
    ]);
    expect(d.seen.get(1)).toEqual({ status: 'preparing', updatedAt: '2025-03-06T10:02:00.000Z' });
  });

  it('the same page again (a repeated poll) is no event; an update that keeps the status only moves the snapshot', () => {
    const page = [order(1, 'preparing', '2025-03-06T10:02:00.000Z')];
    const first = diffOrders(seen([[1, { status: 'confirmed', updatedAt: '2025-03-06T10:01:00.000Z' }]]), page, ALL);
    const again = diffOrders(seen([...first.seen]), page, ALL);
    expect(again.events).toEqual([]);
    expect(again.seen.size).toBe(0);
    const noted = diffOrders(seen([...first.seen]), [order(1, 'preparing', '2025-03-06T10:09:00.000Z')], ALL);
    expect(noted.events).toEqual([]);
    expect(noted.seen.get(1)?.updatedAt).toBe('2025-03-06T10:09:00.000Z');
  });

  it('a record older than the one seen (an overlapping or stale read) is ignored', () => {
    const d = diffOrders(
      seen([[1, { status: 'delivered', updatedAt: '2025-03-06T11:00:00.000Z' }]]),
      [order(1, 'confirmed', '2025-03-06T10:00:00.000Z')],
      ALL,
    );
    expect(d.events).toEqual([]);
  });

  it('an order created before the window and missing from the snapshot was forgotten once settled: no order.created; returned is a change from delivered', () => {
    const since = '2025-03-06T12:00:00.000Z';
    const d = diffOrders(
      seen([]),
      [
        order(5, 'returned', '2025-03-06T12:30:00.000Z'),
        order(6, 'cancelled', '2025-03-06T12:31:00.000Z'),
        order(7, 'delivered', '2025-03-06T12:32:00.000Z'),
        // Created inside the window: new, as before.
        order(8, 'new', '2025-03-06T12:33:00.000Z', '2025-03-06T12:33:00.000Z'),
      ],
      ALL,
      since,
    );
    expect(d.events.map((e) => e.key)).toEqual(['order.status_changed:5:2025-03-06T12:30:00.000Z:returned', 'order.created:8']);
    expect(d.events[0]?.data).toMatchObject({ status: 'returned', previous_status: 'delivered' });
    expect([...d.seen.keys()].sort()).toEqual([5, 6, 7, 8]);
    expect(d.unknown).toEqual([]);
  });

  it('an open order created before the window but missing from the snapshot is reported as unknown, never as created', () => {
    const d = diffOrders(seen([]), [order(9, 'preparing', '2025-03-06T12:30:00.000Z')], ALL, '2025-03-06T12:00:00.000Z');
    expect(d.events).toEqual([]);
    expect(d.unknown).toEqual([9]);
    expect(d.seen.get(9)?.status).toBe('preparing');
    // Without a window (as before this rule), the same order is news.
    expect(diffOrders(seen([]), [order(9, 'preparing', '2025-03-06T12:30:00.000Z')], ALL).events.map((e) => e.name)).toEqual([
      'order.created',
      'order.status_changed',
    ]);
  });

  it('only the subscribed names become events', () => {
    const d = diffOrders(seen([]), [order(3, 'confirmed', '2025-03-06T10:05:00.000Z')], new Set(['order.status_changed']));
    expect(d.events.map((e) => e.name)).toEqual(['order.status_changed']);
    expect(d.seen.has(3)).toBe(true);
  });

  it('the snapshot value round-trips', () => {
    expect(decodeSeen(encodeSeen({ status: 'new', updatedAt: '2025-03-06T10:00:00+01:00' }))).toEqual({
      status: 'new',
      updatedAt: '2025-03-06T10:00:00+01:00',
    });
    expect(decodeSeen(null)).toBeUndefined();
  });
});

describe('diffTasks', () => {
  it('a task is due once per due_at; a moved due_at is due again; the memory is the page', () => {
    const first = diffTasks(new Map(), [task(1, '2025-03-06T09:00:00.000Z'), task(2, '2025-03-06T08:00:00.000Z')]);
    expect(first.events.map((e) => e.key)).toEqual(['task.due:2:2025-03-06T08:00:00.000Z', 'task.due:1:2025-03-06T09:00:00.000Z']);
    const again = diffTasks(first.seen, [task(1, '2025-03-06T09:00:00.000Z')]);
    expect(again.events).toEqual([]);
    expect([...again.seen.keys()]).toEqual([1]);
    const moved = diffTasks(again.seen, [task(1, '2025-03-06T09:30:00.000Z')]);
    expect(moved.events.map((e) => e.key)).toEqual(['task.due:1:2025-03-06T09:30:00.000Z']);
  });
});

describe('derivedDelivery', () => {
  it('is a delivery the catalogue accepts, keyed by the change, marked as polled', () => {
    const [e] = diffOrders(
      seen([[1, { status: 'new', updatedAt: '2025-03-06T10:00:00.000Z' }]]),
      [order(1, 'confirmed', '2025-03-06T10:01:00.000Z')],
      ALL,
    ).events;
    const d = derivedDelivery(e as NonNullable<typeof e>, '2025-03-06T10:01:05.000Z');
    expect(d.headers[SOURCE_HEADER]).toBe('poll');
    const envelope = parseEnvelope(deliveryBytes(d));
    expect(envelope.key).toBe(d.key);
    const r = validateEvent(envelope);
    expect(r.ok && r.event.name).toBe('order.status_changed');
    expect(r.ok && r.event.createdAt).toBe('2025-03-06T10:01:00.000Z');
  });
});
