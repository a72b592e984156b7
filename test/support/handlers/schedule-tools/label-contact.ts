/** Test handler beside the schedule: reads the contact of a won lead. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'label-contact',
  on: ['lead.won'],
  abilities: ['contacts:read'],
  async handle(event, ctx) {
    await ctx.api.contacts.get(event.data.contact_id);
  },
});
