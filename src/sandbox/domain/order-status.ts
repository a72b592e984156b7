import { ApiError, invalid, invalidMany, type FieldErrors } from '../errors.js';
import type { Order, OrderLine, OrderStatus, Workspace } from '../types.js';

/** Spec, Order status: the only moves the status call accepts. Every other move is refused (422). */
export const ORDER_MOVES: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  new: ['confirmed', 'cancelled'],
  confirmed: ['preparing', 'cancelled'],
  preparing: ['out_for_delivery', 'cancelled'],
  out_for_delivery: ['delivered', 'cancelled'],
  delivered: ['returned'],
  cancelled: [],
  returned: [],
};

/** Statuses the `open` list filter means (spec: any other than delivered, cancelled, returned). */
export const OPEN_ORDER_STATUSES: readonly OrderStatus[] = ['new', 'confirmed', 'preparing', 'out_for_delivery'];

/** Whether stock of the order is reserved in this status (between confirm and delivery). */
const HOLDS_RESERVATION = new Set<OrderStatus>(['confirmed', 'preparing', 'out_for_delivery']);

/** The stock counter a line draws on: the variant's, else the product's; null when untracked. */
export interface StockCell {
  onHand: number | null;
  reserved: number;
}
export function stockCell(ws: Workspace, line: OrderLine): StockCell | null {
  if (line.productId === null && line.variantId === null) return null;
  for (const p of ws.products.values()) {
    if (!p.trackStock) continue;
    if (line.variantId !== null) {
      const v = p.variants.find((x) => x.id === line.variantId);
      if (v) return v;
    } else if (p.id === line.productId) {
      return p;
    }
  }
  return null;
}

/**
 * Moves an order (spec: PATCH /orders/{id}/status). Confirming reserves stock
 * for every tracked line, refusing a shortage with 422 unless `force`;
 * cancelling releases a reservation; delivering sells (on hand and reserved
 * both drop); returning restocks.
 */
export function moveOrder(ws: Workspace, order: Order, to: OrderStatus, force: boolean, now: number, reason: string | null): void {
  const from = order.status;
  if (!ORDER_MOVES[from].includes(to)) {
    throw invalidMany({ status: [`cannot move an order from ${from} to ${to}; allowed: ${ORDER_MOVES[from].join(', ') || 'none'}`] });
  }
  const lines = order.items.map((line) => ({ line, cell: stockCell(ws, line) }));
  if (to === 'confirmed' && !force) {
    const need = new Map<StockCell, number>();
    for (const { line, cell } of lines) if (cell) need.set(cell, (need.get(cell) ?? 0) + line.quantity);
    const errors: FieldErrors = {};
    lines.forEach(({ line, cell }, i) => {
      if (!cell || cell.onHand === null) return;
      const available = cell.onHand - cell.reserved;
      if ((need.get(cell) ?? 0) > available) errors[`items.${i}.quantity`] = [`only ${available} of ${line.sku} available`];
    });
    if (Object.keys(errors).length)
      throw new ApiError(422, 'Not enough stock to confirm this order; send force to confirm anyway.', 'insufficient_stock', errors);
  }
  for (const { line, cell } of lines) {
    if (!cell || cell.onHand === null) continue;
    if (to === 'confirmed') cell.reserved += line.quantity;
    else if (to === 'cancelled' && HOLDS_RESERVATION.has(from)) cell.reserved -= line.quantity;
    else if (to === 'delivered') {
      cell.onHand -= line.quantity;
      cell.reserved -= line.quantity;
    } else if (to === 'returned') cell.onHand += line.quantity;
  }
  order.status = to;
  order.updatedAt = now;
  if (to === 'confirmed') order.confirmedAt = now;
  if (to === 'delivered') order.deliveredAt = now;
  if (to === 'cancelled') {
    order.cancelledAt = now;
    order.cancelReason = reason;
  }
}

/** Guard used by the general update: the status is not a field there (spec). */
export function refuseStatusField(body: Record<string, unknown>): void {
  if ('status' in body) throw invalid('status', 'is changed only through PATCH /orders/{id}/status');
}
