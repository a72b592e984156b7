/** `switchyard waits` tests: a contact's lifecycle change sleeps 300 ms (its wake-up is measured). */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'cli-dozer',
  on: ['contact.lifecycle_changed'],
  async handle(_event, ctx) {
    await ctx.sleep('doze', 300);
  },
});
