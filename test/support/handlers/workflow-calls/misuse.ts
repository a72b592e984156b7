/**
 * Misuses a workflow call, chosen by the conversation's subject (issue 32 items 1–3): each must be refused
 * with the same HandlerConfigError in the worker and in testHandler, and dead-lettered on the first attempt.
 */
import { defineHandler, type HandlerContext } from 'switchyard';

const YEAR_MS = 365 * 86_400_000;
const circular = (): unknown => {
  const a: Record<string, unknown> = { name: 'a' };
  a.self = { back: a };
  return a;
};

export const MISUSES: Record<string, (ctx: HandlerContext) => Promise<unknown>> = {
  'bad-event': (ctx) => ctx.waitForEvent('reply', { event: 'message.recieved' as never, match: 'conversation', timeout: '1h' }),
  'timeout-0': (ctx) => ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: 0 }),
  'typo-match': (ctx) => ctx.waitForEvent('reply', { event: 'message.received', match: 'convresation' as never, timeout: '1h' }),
  'sleep-400d': (ctx) => ctx.sleep('long', '400d'),
  'sleep-1e13': (ctx) => ctx.sleep('long', 1e13),
  'until-years': (ctx) => ctx.sleepUntil('later', new Date(Date.now() + 3 * YEAR_MS)),
  'state-map': (ctx) => ctx.state.set({ byContact: new Map([[7, 1]]) }),
  'state-set': (ctx) => ctx.state.update(() => ({ tags: ['a', new Set(['b'])] })),
  'state-bigint': (ctx) => ctx.state.set({ total: 10n }),
  'state-circular': (ctx) => ctx.state.set(circular()),
};

export default defineHandler({
  id: 'wf-misuse',
  on: ['conversation.opened'],
  state: { key: 'conversation' },
  async handle(event, ctx) {
    const misuse = MISUSES[event.data.subject ?? ''];
    if (misuse) await misuse(ctx);
  },
});
