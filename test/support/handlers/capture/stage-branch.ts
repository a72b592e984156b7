/**
 * Test handler: branches on names of things (a lifecycle stage, a lead's title)
 * and writes them into a task, so a redacted replay that changed them would
 * make other calls than the original.
 */
import { defineHandler } from 'switchyard';

const DUE = '2030-01-07T09:00:00Z';

export default defineHandler({
  id: 'stage-branch',
  on: ['contact.lifecycle_changed', 'lead.created', 'lead.won', 'lead.lost'],
  abilities: ['tasks:write'],
  async handle(event, ctx) {
    if (event.name === 'contact.lifecycle_changed') {
      const { contact_id, previous, lifecycle } = event.data;
      if (lifecycle.name !== 'Customer') {
        ctx.log.info({ stage: lifecycle.name }, 'not a customer yet; nothing to do');
        return;
      }
      await ctx.api.tasks.create({ title: `Onboard customer (was ${previous?.name ?? 'no stage'})`, due_at: DUE, contact_id });
      return;
    }
    if (event.data.name.includes('wholesale')) {
      await ctx.api.tasks.create({
        title: `Wholesale lead ${event.data.outcome ?? 'open'}: ${event.data.name}`,
        due_at: DUE,
        contact_id: event.data.contact_id,
      });
    }
  },
});
