/**
 * The first wait ever for `message.sent` in its Redis (nothing watched it before): declared in
 * `waitsFor`, so a reply that arrives while the run lingers (600 ms, before the wait begins) is kept
 * and the wait's lookback sees it. first-waiter-undeclared.ts is the same without `waitsFor`.
 */
import { defineHandler, type HandlerContext, type NoSettings, type WorkspaceEvent } from 'switchyard';
import { record } from '../workflow/record.js';

export async function lingerThenWait(
  h: string,
  event: WorkspaceEvent<'conversation.closed'>,
  ctx: HandlerContext<NoSettings>,
): Promise<void> {
  const conv = event.data.id;
  record({ h, at: 'start', conv });
  await new Promise((r) => setTimeout(r, 600));
  const reply = await ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '3s' });
  record({ h, at: 'done', conv, got: reply ? reply.data.body : null });
}

export default defineHandler({
  id: 'wf-first-waiter',
  on: ['conversation.closed'],
  waitsFor: ['message.sent'],
  handle: (event, ctx) => lingerThenWait('declared', event, ctx),
});
