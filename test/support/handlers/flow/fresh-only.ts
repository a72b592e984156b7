/** maxAge: a conversation opened more than a minute ago is skipped. */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'fresh-only',
  on: ['conversation.opened'],
  maxAge: '1m',
  async handle(event) {
    await record({ h: 'fresh-only', conv: event.data.id });
  },
});
