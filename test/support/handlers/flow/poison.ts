/** Ordered per conversation (message.sent): a body "poison" is dead-lettered at once; the rest is recorded. */
import { defineHandler, UnrecoverableError } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'poison',
  on: ['message.sent'],
  orderBy: 'conversation',
  async handle(event) {
    if (event.data.body === 'poison' && !(globalThis as { __syCured?: boolean }).__syCured) throw new UnrecoverableError('poisoned');
    await record({ h: 'poison', conv: event.data.conversation_id, body: event.data.body });
  },
});
