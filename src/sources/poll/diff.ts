import type { DerivedEventName } from '../../events/index.js';
import type { StoredDelivery } from '../../queue/index.js';
import type { Order, Task } from '../../spec/schemas/index.js';

/**
 * The poller's diffing, pure: what a listing page means against what was seen
 * before. Redis, the API and the clock stay in poller.ts.
 */

/** An event derived from a listing, before it becomes a delivery. */
export interface DerivedEvent {
  /** Deterministic: the same change always gets the same key, so a repeated poll is a duplicate at ingest. */
  readonly key: string;
  readonly name: DerivedEventName;
  /** Its place in time: the order's `updated_at` (created_at for order.created), the task's `due_at`. */
  readonly createdAt: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** What the poller remembers of an order: its status and `updated_at` when last seen. */
export interface SeenOrder {
  readonly status: string;
  readonly updatedAt: string;
}

/** A seen order as one Redis hash field value (`status|updated_at`), and back. */
export const encodeSeen = (s: SeenOrder): string => `${s.status}|${s.updatedAt}`;
export function decodeSeen(v: string | null | undefined): SeenOrder | undefined {
  if (!v) return undefined;
  const bar = v.indexOf('|');
  return bar < 0 ? undefined : { status: v.slice(0, bar), updatedAt: v.slice(bar + 1) };
}

/**
 * Statuses an order can leave only by `delivered` → `returned` (spec, Order
 * status). The poller forgets an order some time after it reached one of them
 * (its snapshot would otherwise grow with every order ever seen), because
 * when a forgotten order is listed again its previous status is still known:
 * `delivered` if it is now `returned`, else the one it has.
 */
export const SETTLED_ORDER_STATUSES: readonly string[] = ['delivered', 'cancelled', 'returned'] satisfies readonly Order['status'][];

export interface OrderDiff {
  /** Oldest first. */
  readonly events: DerivedEvent[];
  /** New values of the snapshot, by order id (orders whose status or updated_at moved). */
  readonly seen: Map<number, SeenOrder>;
  /** The latest `updated_at` of the page (or undefined for an empty page). */
  readonly cursor: string | undefined;
  /**
   * Orders created before `knownBefore` that the snapshot does not hold in an open status: never
   * forgotten, so never seen (a baseline cut at its page limit, a snapshot lost). Their status is
   * recorded from now on; a change before this poll cannot be told.
   */
  readonly unknown: number[];
}

const ms = (iso: string): number => Date.parse(iso);

/**
 * Diffs orders from `GET /orders?since=` against the snapshot (`seen`, by id):
 * an order never seen is `order.created` (plus `order.status_changed` from
 * `new` when it has already moved on); one whose status differs from the one
 * seen is `order.status_changed` with `previous_status`; one seen with the
 * same status, or with an `updated_at` not newer than the one seen, is no
 * event. Moves between two polls fold into one change (a poll sees the
 * current state only). Only the names in `wanted` become events; the snapshot
 * moves on either way.
 *
 * An order missing from `seen` but created before `knownBefore` (the listing's
 * `since`: every order created before it was listed by an earlier poll) was
 * seen and then forgotten in a settled status ({@link SETTLED_ORDER_STATUSES}):
 * it is no `order.created`; `returned` is a change from `delivered`.
 */
export function diffOrders(
  seen: ReadonlyMap<number, SeenOrder | undefined>,
  page: readonly Order[],
  wanted: ReadonlySet<DerivedEventName>,
  knownBefore?: string,
): OrderDiff {
  const events: DerivedEvent[] = [];
  const next = new Map<number, SeenOrder>();
  const unknown: number[] = [];
  let cursor: string | undefined;
  for (const order of page) {
    if (cursor === undefined || ms(order.updated_at) > ms(cursor)) cursor = order.updated_at;
    const before = next.get(order.id) ?? seen.get(order.id);
    if (before && ms(order.updated_at) <= ms(before.updatedAt)) continue;
    next.set(order.id, { status: order.status, updatedAt: order.updated_at });
    if (!before && knownBefore !== undefined && ms(order.created_at) < ms(knownBefore)) {
      if (order.status === 'returned') events.push(statusChange(order, 'delivered'));
      else if (!SETTLED_ORDER_STATUSES.includes(order.status)) unknown.push(order.id);
    } else if (!before) {
      if (wanted.has('order.created')) {
        events.push({ key: `order.created:${order.id}`, name: 'order.created', createdAt: order.created_at, data: order });
      }
      if (order.status !== 'new') events.push(statusChange(order, 'new'));
    } else if (before.status !== order.status) {
      events.push(statusChange(order, before.status));
    }
  }
  return { events: events.filter((e) => wanted.has(e.name)).sort(byTime), seen: next, cursor, unknown };
}

function statusChange(order: Order, previous: string): DerivedEvent {
  return {
    key: `order.status_changed:${order.id}:${order.updated_at}:${order.status}`,
    name: 'order.status_changed',
    createdAt: order.updated_at,
    data: { ...order, previous_status: previous },
  };
}

const byTime = (a: DerivedEvent, b: DerivedEvent): number =>
  ms(a.createdAt) - ms(b.createdAt) || (a.name === 'order.created' ? -1 : b.name === 'order.created' ? 1 : 0);

/**
 * Diffs the open tasks due by now (`GET /tasks?due_before=`) against the
 * `due_at` each was last announced with: a task is `task.due` once per
 * (task, due_at); moving its due_at makes it due again. The new memory is the
 * page itself, so a task done or moved out of the window is forgotten.
 */
export function diffTasks(seen: ReadonlyMap<number, string>, page: readonly Task[]): { events: DerivedEvent[]; seen: Map<number, string> } {
  const events: DerivedEvent[] = [];
  const next = new Map<number, string>();
  for (const task of page) {
    next.set(task.id, task.due_at);
    const before = seen.get(task.id);
    if (before !== undefined && ms(before) === ms(task.due_at)) continue;
    events.push({ key: `task.due:${task.id}:${task.due_at}`, name: 'task.due', createdAt: task.due_at, data: task });
  }
  return { events: events.sort(byTime), seen: next };
}

/** The header that marks a delivery made by Switchyard (`poll`) rather than received. */
export const SOURCE_HEADER = 'x-switchyard-source';

/**
 * A derived event as a delivery for the ingest path (dedupe by key, inbox,
 * pump, `events`, fan-out): the canonical envelope with the key as its id.
 */
export function derivedDelivery(e: DerivedEvent, receivedAt: string, world: string | null = null): StoredDelivery {
  return {
    // In a world (a fresh sandbox reuses order ids), its own delivery keys: `@<world>:order.created:7`.
    key: world === null ? e.key : `@${world}:${e.key}`,
    name: e.name,
    receivedAt,
    secretIndex: -1,
    source: 'poll',
    body: JSON.stringify({ event_id: e.key, event: e.name, created_at: e.createdAt, data: e.data }),
    headers: { 'content-type': 'application/json', 'user-agent': 'switchyard-poller', [SOURCE_HEADER]: 'poll' },
  };
}
