import { isDeepStrictEqual } from 'node:util';
import { Hono } from 'hono';
import { z } from 'zod';
import { ORDER_STATUSES, PAYMENT_STATUSES } from '../../spec/index.js';
import { caller, type Ctx, type Deps, type SandboxEnv } from '../context.js';
import { buildLines, checkPaymentMethod, checkTotal, NewOrder } from '../domain/order-create.js';
import { moveOrder, OPEN_ORDER_STATUSES, refuseStatusField } from '../domain/order-status.js';
import { contactIdIn, conversationIdIn, teammateIn } from '../domain/refs.js';
import { invalid } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { Amount, toCents } from '../money.js';
import { newestFirst, paginate, perPage } from '../pagination.js';
import type { Order, OrderStatus, Workspace } from '../types.js';
import { body, check, intParam, readJson, recordAt, strictBody, timeParam } from '../validation.js';
import { orderView } from '../views/commerce.js';

const StatusBody = strictBody({
  status: z.enum(ORDER_STATUSES, { error: `must be one of ${ORDER_STATUSES.join(', ')}` }),
  force: z.boolean().optional(),
  cancel_reason: z.string().max(255).nullable().optional(),
});
/** General update: the create body's names for delivery, payment, notes, discount, owner (our choice: not shown). */
const OrderPatch = strictBody({
  delivery_address: z.string().nullable().optional(),
  delivery_city: z.string().nullable().optional(),
  delivery_area: z.string().nullable().optional(),
  delivery_fee: Amount.nullable().optional(),
  discount: Amount.nullable().optional(),
  payment_method: z.string().optional(),
  payment_status: z.enum(PAYMENT_STATUSES).optional(),
  payment_reference: z.string().nullable().optional(),
  notes: z.string().nullable().optional(),
  owner_id: z.number().int().nullable().optional(),
});

/** Orders and their status moves (spec: Orders, Order status). */
export function orderRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  const { state } = deps;

  app.get('/orders', guard(deps, 'orders:read'), listOrders);
  app.post('/orders', guard(deps, 'orders:write'), (c) => createOrder(deps, c));
  app.get('/orders/:id', guard(deps, 'orders:read'), (c) => {
    const auth = caller(c);
    return c.json({ data: orderView(orderAt(auth.workspace, c.req.param('id'))) });
  });
  app.patch('/orders/:id', guard(deps, 'orders:write'), (c) => updateOrder(deps, c, c.req.param('id')));
  app.patch('/orders/:id/status', guard(deps, 'orders:write'), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const order = orderAt(ws, c.req.param('id'));
    const b = await body(c, StatusBody);
    moveOrder(ws, order, b.status, b.force ?? false, state.now(), b.cancel_reason ?? null);
    return c.json({ data: orderView(order) });
  });
  return app;
}

function orderAt(ws: Workspace, raw: string): Order {
  return recordAt(ws.orders, raw, 'Order');
}

/** `GET /orders`: filtered by status (or `open`), payment status, contact and `since`. */
function listOrders(c: Ctx): Response {
  const auth = caller(c);
  const q = c.req.query();
  if (q.status && q.status !== 'open' && !ORDER_STATUSES.includes(q.status as OrderStatus)) {
    throw invalid('status', `must be one of open, ${ORDER_STATUSES.join(', ')}`);
  }
  if (q.payment_status && !(PAYMENT_STATUSES as readonly string[]).includes(q.payment_status))
    throw invalid('payment_status', 'must be unpaid, paid or refunded');
  const contactId = intParam(q.contact_id, 'contact_id');
  if (contactId !== undefined) contactIdIn(auth.workspace, contactId, 'contact_id');
  const since = timeParam(q.since, 'since');
  const rows = [...auth.workspace.orders.values()].filter(
    (o) =>
      (!q.status || (q.status === 'open' ? OPEN_ORDER_STATUSES.includes(o.status) : o.status === q.status)) &&
      (!q.payment_status || o.payment.status === q.payment_status) &&
      (contactId === undefined || o.contactId === contactId) &&
      (since === undefined || o.updatedAt >= since),
  );
  return c.json(paginate(rows, newestFirst, orderView, { perPage: perPage(q.per_page), cursor: q.cursor }));
}

/** `POST /orders`: checks the references, then adds the order with the workspace's next number. */
async function createOrder({ state }: Deps, c: Ctx): Promise<Response> {
  const auth = caller(c);
  const ws = auth.workspace;
  const b = await body(c, NewOrder);
  contactIdIn(ws, b.contact_id, 'contact_id');
  if (b.conversation_id != null) conversationIdIn(ws, b.conversation_id, 'conversation_id');
  if (b.owner_id != null) teammateIn(ws, b.owner_id, 'owner_id');
  checkPaymentMethod(ws, b.payment_method ?? 'cod');
  // Spec: a second order with the same external_id answers 422.
  if (b.external_id != null && [...ws.orders.values()].some((o) => o.externalId === b.external_id)) {
    throw invalid('external_id', 'has already been taken');
  }
  const items = buildLines(ws, state.ids, b.items);
  const now = state.now();
  const order = newOrder(state.ids.take(), ws.nextOrderNumber, b, items, now);
  checkTotal(order);
  ws.nextOrderNumber += 1;
  ws.orders.set(order.id, order);
  return c.json({ data: orderView(order) }, 201);
}

/** A new order (status `new`, unpaid) from a checked create body. */
function newOrder(id: number, number: number, b: z.infer<typeof NewOrder>, items: Order['items'], now: number): Order {
  return {
    id,
    number,
    contactId: b.contact_id,
    conversationId: b.conversation_id ?? null,
    dealId: null,
    ownerId: b.owner_id ?? null,
    status: 'new',
    source: 'api',
    payment: { method: b.payment_method ?? 'cod', status: 'unpaid', reference: null, paidAt: null },
    delivery: {
      address: b.delivery_address ?? null,
      city: b.delivery_city ?? null,
      area: b.delivery_area ?? null,
      feeCents: toCents(b.delivery_fee ?? 0),
    },
    items,
    discountCents: toCents(b.discount ?? 0),
    notes: b.notes ?? null,
    externalId: b.external_id ?? null,
    confirmedAt: null,
    deliveredAt: null,
    cancelledAt: null,
    cancelReason: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** `PATCH /orders/:id`: the general update (a `status` field is refused: that is `/status`). */
async function updateOrder({ state }: Deps, c: Ctx, id: string): Promise<Response> {
  const auth = caller(c);
  const ws = auth.workspace;
  const order = orderAt(ws, id);
  const raw = await readJson(c);
  if (raw && typeof raw === 'object') refuseStatusField(raw as Record<string, unknown>);
  const b = check(OrderPatch, raw);
  if (b.payment_method !== undefined) checkPaymentMethod(ws, b.payment_method);
  if (b.owner_id != null) teammateIn(ws, b.owner_id, 'owner_id');
  const now = state.now();
  const next = patchedOrder(order, b, now);
  checkTotal(next);
  // Only a real change moves updated_at (what `since` polls): a repeated identical PATCH is none.
  if (!isDeepStrictEqual(next, order)) next.updatedAt = now;
  Object.assign(order, next);
  return c.json({ data: orderView(order) });
}

/** A copy of the order with the patch's fields applied (updated_at left as it was). */
function patchedOrder(order: Order, b: z.infer<typeof OrderPatch>, now: number): Order {
  const next: Order = structuredClone(order);
  if (b.delivery_address !== undefined) next.delivery.address = b.delivery_address;
  if (b.delivery_city !== undefined) next.delivery.city = b.delivery_city;
  if (b.delivery_area !== undefined) next.delivery.area = b.delivery_area;
  if (b.delivery_fee !== undefined) next.delivery.feeCents = toCents(b.delivery_fee ?? 0);
  if (b.discount !== undefined) next.discountCents = toCents(b.discount ?? 0);
  if (b.payment_method !== undefined) next.payment.method = b.payment_method;
  if (b.payment_reference !== undefined) next.payment.reference = b.payment_reference;
  if (b.payment_status !== undefined && b.payment_status !== next.payment.status) {
    next.payment.status = b.payment_status;
    next.payment.paidAt = b.payment_status === 'paid' ? now : next.payment.paidAt;
  }
  if (b.notes !== undefined) next.notes = b.notes;
  if (b.owner_id !== undefined) next.ownerId = b.owner_id;
  return next;
}
