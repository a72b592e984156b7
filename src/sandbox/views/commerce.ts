import { iso, isoOrNull } from '../clock.js';
import { money } from '../money.js';
import type { Order, Product } from '../types.js';

/** Stock a customer may still order: on hand minus reserved; null when untracked. */
export function available(onHand: number | null, reserved: number): number | null {
  return onHand === null ? null : onHand - reserved;
}

/**
 * Product-level `available`: null when stock is not tracked; for a product
 * with variants, stock is counted per variant, so it is the sum of the active
 * variants' `available` (our choice: not shown; an inactive variant cannot be
 * ordered); otherwise the product's own.
 */
export function productAvailable(p: Product): number | null {
  if (!p.trackStock) return null;
  if (p.variants.length === 0) return available(p.onHand, p.reserved);
  return p.variants.filter((v) => v.isActive).reduce((sum, v) => sum + (available(v.onHand, v.reserved) ?? 0), 0);
}

/** Order totals in cents: subtotal of lines, then minus discount plus delivery fee. */
export function orderTotals(o: Order): { subtotal: number; total: number } {
  const subtotal = o.items.reduce((sum, l) => sum + l.quantity * l.unitPriceCents, 0);
  return { subtotal, total: subtotal - o.discountCents + o.delivery.feeCents };
}

/** Order as the API answers it, money as two-decimal strings. */
export function orderView(o: Order): Record<string, unknown> {
  const { subtotal, total } = orderTotals(o);
  return {
    id: o.id,
    number: o.number,
    contact_id: o.contactId,
    conversation_id: o.conversationId,
    deal_id: o.dealId,
    owner_id: o.ownerId,
    status: o.status,
    source: o.source,
    payment: { method: o.payment.method, status: o.payment.status, reference: o.payment.reference, paid_at: isoOrNull(o.payment.paidAt) },
    delivery: { address: o.delivery.address, city: o.delivery.city, area: o.delivery.area, fee: money(o.delivery.feeCents) },
    items: o.items.map((l) => ({
      id: l.id,
      product_id: l.productId,
      product_variant_id: l.variantId,
      name: l.name,
      sku: l.sku,
      quantity: l.quantity,
      unit_price: money(l.unitPriceCents),
      line_total: money(l.quantity * l.unitPriceCents),
    })),
    subtotal: money(subtotal),
    discount: money(o.discountCents),
    total: money(total),
    notes: o.notes,
    external_id: o.externalId,
    confirmed_at: isoOrNull(o.confirmedAt),
    delivered_at: isoOrNull(o.deliveredAt),
    cancelled_at: isoOrNull(o.cancelledAt),
    cancel_reason: o.cancelReason,
    created_at: iso(o.createdAt),
    updated_at: iso(o.updatedAt),
  };
}

/** Product with its variants as the API answers it. */
export function productView(p: Product): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    sku: p.sku,
    price: money(p.priceCents),
    is_active: p.isActive,
    track_stock: p.trackStock,
    available: productAvailable(p),
    image_url: p.imageUrl,
    variants: p.variants.map((v) => ({
      id: v.id,
      name: v.name,
      options: { ...v.options },
      sku: v.sku,
      price: money(v.priceCents),
      available: available(v.onHand, v.reserved),
      is_active: v.isActive,
    })),
    created_at: iso(p.createdAt),
  };
}
