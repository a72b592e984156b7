/** first-waiter.ts without `waitsFor`: its first wait for `message.sent` looks back only from when it began. */
import { defineHandler } from 'switchyard';
import { lingerThenWait } from './first-waiter.js';

export default defineHandler({
  id: 'wf-first-waiter-undeclared',
  on: ['conversation.closed'],
  handle: (event, ctx) => lingerThenWait('undeclared', event, ctx),
});
