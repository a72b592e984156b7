/** Test handler: records each new order. */
import { defineHandler } from 'switchyard';
import { polledRuns } from './runs.js';

export default defineHandler({
  id: 'order-created',
  on: ['order.created'],
  handle(event, ctx) {
    polledRuns().push({ handler: 'order-created', key: ctx.delivery.key, id: event.data.id, status: event.data.status });
  },
});
