/** A schedule whose every attempt fails (retryable): its second and last attempt is dead, not a retry. */
import { defineSchedule } from 'switchyard';

export default defineSchedule({
  id: 'always-failing',
  every: '1h',
  retry: { attempts: 2, backoff: { type: 'fixed', delay: '50ms' } },
  async handle() {
    throw new Error('export target unreachable');
  },
});
