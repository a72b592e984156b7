import { z } from 'zod';
import { ORDER_STATUSES, PAYMENT_STATUSES } from '../index.js';
import { DecimalString, Id, Timestamp } from './common.js';

export const OrderStatus = z.enum(ORDER_STATUSES);
export type OrderStatus = z.infer<typeof OrderStatus>;
export const PaymentStatus = z.enum(PAYMENT_STATUSES);
export type PaymentStatus = z.infer<typeof PaymentStatus>;

/** Order line: name and unit price are snapshotted at placement. */
export const OrderLine = z.looseObject({
  id: Id,
  product_id: Id.nullable(),
  product_variant_id: Id.nullable(),
  name: z.string(),
  sku: z.string().nullable(),
  quantity: z.number().int(),
  unit_price: DecimalString,
  line_total: DecimalString,
});
export type OrderLine = z.infer<typeof OrderLine>;

export const Order = z.looseObject({
  id: Id,
  number: z.number().int(),
  contact_id: Id,
  conversation_id: Id.nullable(),
  deal_id: Id.nullable(),
  owner_id: Id.nullable(),
  status: OrderStatus,
  source: z.string(),
  payment: z.looseObject({
    method: z.string().nullable(),
    status: PaymentStatus,
    reference: z.string().nullable(),
    paid_at: Timestamp.nullable(),
  }),
  delivery: z.looseObject({
    address: z.string().nullable(),
    city: z.string().nullable(),
    area: z.string().nullable(),
    fee: DecimalString,
  }),
  items: z.array(OrderLine),
  subtotal: DecimalString,
  discount: DecimalString,
  total: DecimalString,
  notes: z.string().nullable(),
  external_id: z.string().nullable(),
  confirmed_at: Timestamp.nullable(),
  delivered_at: Timestamp.nullable(),
  cancelled_at: Timestamp.nullable(),
  cancel_reason: z.string().nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Order = z.infer<typeof Order>;
