/** Test handler: records each order status change, one order's changes in order (orderBy the order id). */
import { defineHandler } from 'switchyard';
import { polledRuns } from './runs.js';

export default defineHandler({
  id: 'order-moves',
  on: ['order.status_changed'],
  orderBy: (event) => `order:${event.data.id}`,
  handle(event, ctx) {
    polledRuns().push({
      handler: 'order-moves',
      key: ctx.delivery.key,
      id: event.data.id,
      status: event.data.status,
      previous: event.data.previous_status,
    });
  },
});
