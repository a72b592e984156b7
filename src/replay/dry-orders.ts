import { Order, OrderStatus, PaymentStatus, type OrderLine, Product } from '../spec/schemas/index.js';
import {
  cents,
  centsOf,
  data,
  found,
  int,
  money,
  notFound,
  nullable,
  overlay,
  str,
  unprocessable,
  type Body,
  type DryAnswer,
  type DryEnv,
  type DryRoute,
} from './dry-kit.js';

/** A line of `POST /orders`: a catalogue line has the product's (or variant's) name, sku and price snapshotted (a read of the product). */
async function line(item: Body, i: number, env: DryEnv): Promise<{ line: OrderLine } | { refused: DryAnswer }> {
  const productId = int(item['product_id']) ?? null;
  const variantId = int(item['product_variant_id']) ?? null;
  let name = str(item['name']) ?? '';
  let sku: string | null = null;
  let price = 0;
  if (productId !== null) {
    const l = await env.read(`/products/${productId}`);
    if (l.status === 404) return { refused: unprocessable(`items.${i}.product_id`, 'no such product') };
    const p = found(l, Product);
    const v = p?.variants.find((x) => x.id === variantId);
    if (p) [name, sku, price] = [v ? `${p.name} ${v.name}` : p.name, v?.sku ?? p.sku, centsOf(v?.price ?? p.price)];
  }
  if (typeof item['unit_price'] === 'number') price = cents(item['unit_price']);
  const quantity = int(item['quantity']) ?? 1;
  return {
    line: {
      id: env.nextId(),
      product_id: productId,
      product_variant_id: variantId,
      name,
      sku,
      quantity,
      unit_price: money(price),
      line_total: money(price * quantity),
    },
  };
}

/** Subtotal of the lines and total after discount and delivery fee. */
function totals(o: Order): Order {
  const subtotal = o.items.reduce((s, l) => s + centsOf(l.line_total), 0);
  return { ...o, subtotal: money(subtotal), total: money(subtotal - centsOf(o.discount) + centsOf(o.delivery.fee)) };
}

/** An order with nothing set: the base of a new one, and of a change to one the dry run could not read. */
const blankOrder = (id: number, at: string): Order => ({
  id,
  number: id,
  contact_id: 0,
  conversation_id: null,
  deal_id: null,
  owner_id: null,
  status: 'new',
  source: 'api',
  payment: { method: null, status: 'unpaid', reference: null, paid_at: null },
  delivery: { address: null, city: null, area: null, fee: '0.00' },
  items: [],
  subtotal: '0.00',
  discount: '0.00',
  total: '0.00',
  notes: null,
  external_id: null,
  confirmed_at: null,
  delivered_at: null,
  cancelled_at: null,
  cancel_reason: null,
  created_at: at,
  updated_at: at,
});

async function placeOrder(b: Body, env: DryEnv): Promise<DryAnswer> {
  const items: OrderLine[] = [];
  const asked = Array.isArray(b['items']) ? (b['items'] as unknown[]) : [];
  for (const [i, item] of asked.entries()) {
    const l = await line(typeof item === 'object' && item !== null ? (item as Body) : {}, i, env);
    if ('refused' in l) return l.refused;
    items.push(l.line);
  }
  const id = env.nextId();
  const order: Order = totals({
    ...blankOrder(id, env.now()),
    contact_id: int(b['contact_id']) ?? 0,
    conversation_id: int(b['conversation_id']) ?? null,
    owner_id: int(b['owner_id']) ?? null,
    payment: { method: str(b['payment_method']) ?? null, status: 'unpaid', reference: null, paid_at: null },
    delivery: {
      address: str(b['delivery_address']) ?? null,
      city: str(b['delivery_city']) ?? null,
      area: str(b['delivery_area']) ?? null,
      fee: money(cents(b['delivery_fee'])),
    },
    items,
    discount: money(cents(b['discount'])),
    notes: str(b['notes']) ?? null,
    external_id: str(b['external_id']) ?? null,
  });
  env.remember(`/orders/${id}`, order);
  return data(201, order);
}

/** The order at `/orders/{id}` changed by `change` (404 passed on; one that could not be read is built from the body and the path id). */
async function changeOrder(id: string, env: DryEnv, change: (o: Order, at: string) => Order): Promise<DryAnswer> {
  const l = await env.read(`/orders/${id}`);
  if (l.status === 404) return notFound(l);
  const at = env.now();
  const o = { ...change(found(l, Order) ?? blankOrder(Number(id), at), at), updated_at: at };
  env.remember(`/orders/${id}`, o);
  return data(200, o);
}

/**
 * `PATCH /orders/{id}`: delivery, payment, notes, discount, owner (the names of the create body, plus payment_status and
 * payment_reference).
 */
function patchOrder(o: Order, b: Body, at: string): Order {
  const pay = PaymentStatus.safeParse(b['payment_status']);
  return totals(
    overlay(o, {
      delivery: overlay(o.delivery, {
        address: nullable(b, 'delivery_address', str),
        city: nullable(b, 'delivery_city', str),
        area: nullable(b, 'delivery_area', str),
        fee: 'delivery_fee' in b ? money(cents(b['delivery_fee'])) : undefined,
      }),
      payment: overlay(o.payment, {
        method: nullable(b, 'payment_method', str),
        reference: nullable(b, 'payment_reference', str),
        status: pay.success ? pay.data : undefined,
        paid_at: pay.success ? (pay.data === 'paid' ? (o.payment.paid_at ?? at) : null) : undefined,
      }),
      discount: 'discount' in b ? money(cents(b['discount'])) : undefined,
      notes: nullable(b, 'notes', str),
      owner_id: nullable(b, 'owner_id', int),
    }),
  );
}

/**
 * `PATCH /orders/{id}/status`: the new status with its timestamp (the spec's moves are not checked: a refused move is the
 * API's to answer).
 */
function moveOrder(o: Order, b: Body, at: string): Order {
  const s = OrderStatus.safeParse(b['status']);
  if (!s.success) return o;
  const stamp = { confirmed: 'confirmed_at', delivered: 'delivered_at', cancelled: 'cancelled_at' } as const;
  const field = s.data in stamp ? stamp[s.data as keyof typeof stamp] : undefined;
  return {
    ...o,
    status: s.data,
    ...(field ? { [field]: at } : {}),
    ...(s.data === 'cancelled' ? { cancel_reason: str(b['cancel_reason']) ?? null } : {}),
  };
}

/** Answers of the order writes. */
export const ORDER_ROUTES: readonly DryRoute[] = [
  { method: 'POST', pattern: '/orders', op: 'orders.create', answer: (_p, b, env) => placeOrder(b, env) },
  {
    method: 'PATCH',
    pattern: '/orders/:id',
    op: 'orders.update',
    answer: ([id = ''], b, env) => changeOrder(id, env, (o, at) => patchOrder(o, b, at)),
  },
  {
    method: 'PATCH',
    pattern: '/orders/:id/status',
    op: 'orders.setStatus',
    answer: ([id = ''], b, env) => changeOrder(id, env, (o, at) => moveOrder(o, b, at)),
  },
];
