/**
 * Ordered per conversation: records `{conv, seq, attempt}` where seq is the
 * message body. FLOW_SLOW_SEQ lingers on that seq (so later ones queue up);
 * FLOW_FAIL_EVERY=n fails the first attempt of every n-th seq once.
 */
import { defineHandler } from 'switchyard';
import { exclusive, record, sleep } from './record.js';

export default defineHandler({
  id: 'ordered',
  on: ['message.received'],
  orderBy: 'conversation',
  retry: { attempts: 8, backoff: { type: 'fixed', delay: 30 } },
  async handle(event, ctx) {
    const conv = event.data.conversation_id;
    const seq = Number(event.data.body);
    await exclusive(`ordered:${conv}`, async () => {
      await record({ h: 'ordered', at: 'start', conv, seq, attempt: ctx.delivery.attempt });
      if (String(seq) === process.env['FLOW_SLOW_SEQ']) await sleep(Number(process.env['FLOW_SLOW_MS'] ?? 800));
      else await sleep(Math.floor(Math.random() * 8));
      const every = Number(process.env['FLOW_FAIL_EVERY'] ?? 0);
      if (every > 0 && seq % every === 0 && ctx.delivery.attempt === 1) throw new Error(`failing seq ${seq} once`);
      await record({ h: 'ordered', at: 'done', conv, seq, attempt: ctx.delivery.attempt });
    });
  },
});
