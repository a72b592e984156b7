import type { Paginator, PageQuery } from '../pagination.js';
import type { ApiPromise } from '../response.js';
import { ORDER_STATUSES, MAX_CHARS } from '../../spec/index.js';
import { Order, type OrderStatus, type PaymentStatus } from '../../spec/schemas/index.js';
import type { RequestOptions, WriteOptions } from '../transport.js';
import { check } from '../validate.js';
import { idPath, iso, listing, one, paged, type ResourceContext } from './shared.js';

export interface OrderListQuery extends PageQuery {
  /** An order status, or `open` (anything but delivered, cancelled, returned). */
  status?: OrderStatus | 'open';
  payment_status?: PaymentStatus;
  contact_id?: number;
  /** Compared to `updated_at` (polling). */
  since?: string | Date;
}

/** A line of `POST /orders`: a catalogue product/variant, or a free-text line with `name` and `unit_price`. */
export interface OrderLineInput {
  product_id?: number | null;
  product_variant_id?: number | null;
  name?: string | null;
  /** 1 or more. */
  quantity: number;
  /** Overrides the catalogue price; required for a free-text line. */
  unit_price?: number | null;
}

/** Body of `POST /orders`; the order is placed in `new`. */
export interface OrderCreate {
  contact_id: number;
  /** At least one line. */
  items: OrderLineInput[];
  delivery_address?: string | null;
  delivery_city?: string | null;
  delivery_area?: string | null;
  delivery_fee?: number | null;
  discount?: number | null;
  /** Key of an active payment method (`cod`, `bank_transfer`, `wallet`, …). */
  payment_method?: string | null;
  notes?: string | null;
  owner_id?: number | null;
  conversation_id?: number | null;
  /** At most 191; unique per workspace (a duplicate answers 422). */
  external_id?: string | null;
}

/**
 * Body of `PATCH /orders/{id}`: delivery, payment, notes, discount or owner.
 * The spec gives no field names beyond the create body's, so those are used.
 * The status is never changed here: use `setStatus`.
 */
export type OrderPatch = Partial<
  Pick<
    OrderCreate,
    'delivery_address' | 'delivery_city' | 'delivery_area' | 'delivery_fee' | 'discount' | 'payment_method' | 'notes' | 'owner_id'
  >
> & {
  /** Payment state (`payment.status` of the record). */
  payment_status?: PaymentStatus;
  /** Payment reference (`payment.reference`). */
  payment_reference?: string | null;
};

function checkMoney(op: string, b: OrderPatch): void {
  check(op).amount('delivery_fee', b.delivery_fee).amount('discount', b.discount).int('owner_id', b.owner_id, 1);
}

export function ordersResource(ctx: ResourceContext) {
  const { transport: t } = ctx;
  const path = (op: string, id: number): string => `/orders/${idPath(op, 'id', id)}`;
  return {
    /** `GET /orders`. */
    list(query: OrderListQuery = {}, options?: RequestOptions): Paginator<Order> {
      check('orders.list')
        .oneOf('status', query.status, [...ORDER_STATUSES, 'open'])
        .dateOrTimestamp('since', query.since);
      return listing(ctx, 'orders.list', '/orders', paged(Order), { ...query, since: iso(query.since) }, options);
    },
    /** `GET /orders/{id}` with its lines. */
    get(id: number, options?: RequestOptions): ApiPromise<Order> {
      return t.request({ op: 'orders.get', method: 'GET', path: path('orders.get', id), schema: one(Order), repeat: 'safe', options });
    },
    /** `POST /orders` (IK): places an order in `new`; catalogue lines have name and price snapshotted. */
    create(body: OrderCreate, options?: WriteOptions): ApiPromise<Order> {
      const op = 'orders.create';
      const c = check(op)
        .present('contact_id', body.contact_id, 'a contact id')
        .int('contact_id', body.contact_id, 1)
        .maxLen('external_id', body.external_id, MAX_CHARS.orderExternalId);
      if (!Array.isArray(body.items) || body.items.length < 1) c.fail('items', 'at least 1 line');
      body.items.forEach((l, i) => {
        c.present(`items.${i}.quantity`, l.quantity, 'an integer >= 1')
          .int(`items.${i}.quantity`, l.quantity, 1)
          .amount(`items.${i}.unit_price`, l.unit_price)
          .int(`items.${i}.product_id`, l.product_id, 1)
          .int(`items.${i}.product_variant_id`, l.product_variant_id, 1);
        const freeText = (l.product_id ?? null) === null && (l.product_variant_id ?? null) === null;
        if (freeText && (l.name ?? '') === '') c.fail(`items.${i}.name`, 'required for a line without product_id or product_variant_id');
        if (freeText && (l.unit_price ?? null) === null) c.fail(`items.${i}.unit_price`, 'required for a free-text line');
      });
      checkMoney(op, body);
      return t.request({ op, method: 'POST', path: '/orders', body, schema: one(Order), repeat: 'ik', options });
    },
    /** `PATCH /orders/{id}` (IK): delivery, payment, notes, discount, owner. */
    update(id: number, body: OrderPatch, options?: WriteOptions): ApiPromise<Order> {
      const op = 'orders.update';
      if ('status' in body) check(op).fail('status', 'not changed here: use orders.setStatus');
      checkMoney(op, body);
      return t.request({ op, method: 'PATCH', path: path(op, id), body, schema: one(Order), repeat: 'ik', options });
    },
    /**
     * `PATCH /orders/{id}/status` (IK): moves the order (new → confirmed → preparing →
     * out_for_delivery → delivered; cancelled from any open status; delivered → returned).
     * `force` confirms despite a stock shortage (otherwise 422).
     */
    setStatus(id: number, status: OrderStatus, opts: { force?: boolean } & WriteOptions = {}): ApiPromise<Order> {
      const op = 'orders.setStatus';
      const { force, ...options } = opts;
      check(op).oneOf('status', status, ORDER_STATUSES);
      const body = force === undefined ? { status } : { status, force };
      return t.request({ op, method: 'PATCH', path: `${path(op, id)}/status`, body, schema: one(Order), repeat: 'ik', options });
    },
  };
}

export type OrdersResource = ReturnType<typeof ordersResource>;
