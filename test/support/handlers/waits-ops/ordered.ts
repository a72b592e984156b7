/** waits-ops tests: a contact's lifecycle changes run one at a time per contact (orderBy); each sleeps an hour. */
import { defineHandler } from 'switchyard';
import { opsTally } from './tally.js';

export default defineHandler({
  id: 'ops-ordered',
  on: ['contact.lifecycle_changed'],
  orderBy: 'contact',
  async handle(event, ctx) {
    opsTally(ctx.delivery.key).got.push('started');
    await ctx.sleep('hold', '1h');
    opsTally(ctx.delivery.key).after++;
  },
});
