/** High-priority work: one internal note per inbound message (a customer is waiting). */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'urgent-note',
  on: ['message.received'],
  abilities: ['conversations:write'],
  priority: process.env['URGENT_PRIORITY'] === 'low' ? 'low' : 'high',
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.conversation_id, { body: `urgent ${event.id ?? ctx.delivery.key}` });
  },
});
