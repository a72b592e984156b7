// bench/flow: no orderBy; otherwise identical to ../ordered/ordered.ts.
import { defineHandler } from 'switchyard';
import { benchRun } from '../run-record.js';

export default defineHandler({
  id: 'bench-flow',
  on: ['message.received'],
  retry: { attempts: 8, backoff: { type: 'fixed', delay: 30 } },
  async handle(event, ctx) {
    await benchRun(event, ctx.delivery.attempt);
  },
});
