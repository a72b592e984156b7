/** Test handler: always fails (retryable); `retry` allows it 2 runs, 50 ms apart. */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'gives-up-early',
  on: ['message.received'],
  retry: { attempts: 2, backoff: { type: 'fixed', delay: '50ms' } },
  handle() {
    throw new Error('always fails');
  },
});
