/** Subject `dies`: writes, sleeps 500 ms, then is dead-lettered until `globalThis.__syWfCured` (dlq retry must not sleep or write again). */
import { defineHandler, NonRetriableError } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'wf-dies',
  on: ['conversation.created'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    if (event.data.subject !== 'dies') return;
    await ctx.api.notes.create(event.data.id, { body: `dies-before ${event.id}` });
    await ctx.sleep('nap', 500);
    record({ h: 'dies', at: 'after-sleep', conv: event.data.id });
    if (!(globalThis as { __syWfCured?: boolean }).__syWfCured) throw new NonRetriableError('not cured yet');
    record({ h: 'dies', at: 'done', conv: event.data.id });
  },
});
