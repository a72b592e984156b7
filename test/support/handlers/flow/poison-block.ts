/** As poison.ts, but a dead-lettered run holds its conversation (onDead: block) until it is retried or purged. */
import { defineHandler, UnrecoverableError } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'poison-block',
  on: ['message.sent'],
  orderBy: 'conversation',
  onDead: 'block',
  async handle(event) {
    if (event.data.body === 'poison' && !(globalThis as { __syCured?: boolean }).__syCured) throw new UnrecoverableError('poisoned');
    await record({ h: 'poison-block', conv: event.data.conversation_id, body: event.data.body });
  },
});
