/** debounce per contact: a burst of lifecycle changes runs once with the latest one and the count. */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'debounced',
  on: ['contact.lifecycle_changed'],
  debounce: { key: 'contact', wait: '400ms', maxWait: '1500ms' },
  async handle(event, ctx) {
    await record({ h: 'debounced', contact: event.data.contact_id, stage: event.data.lifecycle.name, count: ctx.debounced?.count ?? null });
  },
});
