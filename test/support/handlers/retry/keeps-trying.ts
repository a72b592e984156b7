/** Test handler: always fails (retryable), with the default retries (10 attempts, exponential from 2 s). */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'keeps-trying',
  on: ['message.received'],
  handle() {
    throw new Error('always fails too');
  },
});
