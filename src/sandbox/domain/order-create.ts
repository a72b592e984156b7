import { z } from 'zod';
import { MAX_CHARS, MONEY } from '../../spec/index.js';
import { strictBody, tooLong } from '../validation.js';
import { invalid, invalidMany, type FieldErrors } from '../errors.js';
import type { IdSequence } from '../ids.js';
import { Amount, toCents } from '../money.js';
import type { Order, OrderLine, Workspace } from '../types.js';
import { orderTotals } from '../views/commerce.js';

const Line = strictBody({
  product_id: z.number().int().nullable().optional(),
  product_variant_id: z.number().int().nullable().optional(),
  name: z.string().min(1).max(255).nullable().optional(),
  quantity: z.number({ error: 'is required' }).int('must be an integer').min(1, 'must be at least 1'),
  unit_price: Amount.nullable().optional(),
});

/** Spec, POST /orders body. */
export const NewOrder = strictBody({
  contact_id: z.number({ error: 'is required' }).int(),
  items: z.array(Line, { error: 'is required' }).min(1, 'needs at least one line'),
  delivery_address: z.string().nullable().optional(),
  delivery_city: z.string().nullable().optional(),
  delivery_area: z.string().nullable().optional(),
  delivery_fee: Amount.nullable().optional(),
  discount: Amount.nullable().optional(),
  payment_method: z.string().nullable().optional(),
  notes: z.string().nullable().optional(),
  owner_id: z.number().int().nullable().optional(),
  conversation_id: z.number().int().nullable().optional(),
  external_id: z.string().max(MAX_CHARS.orderExternalId, tooLong(MAX_CHARS.orderExternalId)).nullable().optional(),
});
export type NewOrder = z.infer<typeof NewOrder>;

/**
 * Resolves the lines: a catalogue product or variant has its name, sku and
 * price snapshotted (a `unit_price` overrides the price); a product with
 * variants needs the variant; a free-text line needs `name` and `unit_price`.
 */
export function buildLines(ws: Workspace, ids: IdSequence, items: NewOrder['items']): OrderLine[] {
  const errors: FieldErrors = {};
  const lines = items.map((item, i): OrderLine | null => {
    const err = (field: string, message: string): null => {
      errors[`items.${i}.${field}`] = [message];
      return null;
    };
    const override = item.unit_price != null ? toCents(item.unit_price) : null;
    if (item.product_variant_id != null) {
      const product = [...ws.products.values()].find((p) => p.variants.some((v) => v.id === item.product_variant_id));
      const variant = product?.variants.find((v) => v.id === item.product_variant_id);
      if (!product || !variant) return err('product_variant_id', 'does not name a product variant of this workspace');
      if (item.product_id != null && item.product_id !== product.id) return err('product_variant_id', 'is not a variant of product_id');
      if (!product.isActive || !variant.isActive) return err('product_variant_id', 'is not active');
      return {
        id: ids.take(),
        productId: product.id,
        variantId: variant.id,
        name: `${product.name} - ${variant.name}`,
        sku: variant.sku,
        quantity: item.quantity,
        unitPriceCents: override ?? variant.priceCents,
      };
    }
    if (item.product_id != null) {
      const product = ws.products.get(item.product_id);
      if (!product) return err('product_id', 'does not name a product of this workspace');
      if (!product.isActive) return err('product_id', 'is not active');
      if (product.variants.length) return err('product_variant_id', 'is required for a product with variants');
      return {
        id: ids.take(),
        productId: product.id,
        variantId: null,
        name: product.name,
        sku: product.sku,
        quantity: item.quantity,
        unitPriceCents: override ?? product.priceCents,
      };
    }
    if (!item.name) return err('name', 'is required for a free-text line');
    if (override === null) return err('unit_price', 'is required for a free-text line');
    return {
      id: ids.take(),
      productId: null,
      variantId: null,
      name: item.name,
      sku: '',
      quantity: item.quantity,
      unitPriceCents: override,
    };
  });
  if (Object.keys(errors).length) throw invalidMany(errors);
  return lines as OrderLine[];
}

/** Checks a payment method key against the workspace's active methods (422). */
export function checkPaymentMethod(ws: Workspace, key: string, field = 'payment_method'): void {
  if (!ws.paymentMethods.some((m) => m.key === key && m.active)) {
    throw invalid(
      field,
      `must be one of: ${ws.paymentMethods
        .filter((m) => m.active)
        .map((m) => m.key)
        .join(', ')}`,
    );
  }
}

const MAX_CENTS = toCents(MONEY.max);

/**
 * A discount may not take the total below zero (our choice: not shown); and
 * what the order adds up (a line's total, the subtotal plus the delivery fee)
 * stays within the money bound, so every amount it answers is exact.
 */
export function checkTotal(order: Order): void {
  const errors: FieldErrors = {};
  order.items.forEach((l, i) => {
    if (l.quantity * l.unitPriceCents > MAX_CENTS) errors[`items.${i}.quantity`] = [`makes a line total over ${MONEY.maxText}`];
  });
  if (Object.keys(errors).length) throw invalidMany(errors);
  const { subtotal, total } = orderTotals(order);
  if (subtotal + order.delivery.feeCents > MAX_CENTS) throw invalid('items', `the order adds up to more than ${MONEY.maxText}`);
  if (total < 0) throw invalid('discount', 'may not exceed the subtotal plus delivery fee');
}
