/** skipStale per conversation: applies a conversation's assignment only when no later one was applied. */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'latest-status',
  on: ['conversation.assigned'],
  orderBy: 'conversation',
  skipStale: true,
  async handle(event) {
    await record({ h: 'latest-status', conv: event.data.id, subject: event.data.subject });
  },
});
