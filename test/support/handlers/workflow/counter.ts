/** Counts lifecycle changes per contact in ctx.state, then naps 300 ms (its replay must not count again). */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'wf-counter',
  on: ['contact.lifecycle_changed'],
  state: { key: 'contact' },
  async handle(event, ctx) {
    const n = await ctx.state.update((c) => (typeof c === 'number' ? c : 0) + 1);
    await ctx.sleep('nap', 300);
    record({ h: 'counter', contact: event.data.contact_id, n });
  },
});
