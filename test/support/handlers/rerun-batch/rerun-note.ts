/**
 * Rerun tests: one step (the conversation id) and one note per message, whose text says what the event
 * carried; a body with `bug` fails for good while `globalThis.__syRerunBug` is set (the bad deploy).
 */
import { defineHandler, UnrecoverableError } from 'switchyard';

export default defineHandler({
  id: 'rerun-note',
  on: ['message.received'],
  abilities: ['conversations:write'],
  retry: { attempts: 2, backoff: { type: 'fixed', delay: '50ms' } },
  async handle(event, ctx) {
    const conv = await ctx.step('conversation', async () => event.data.conversation_id);
    if (event.data.body.includes('bug') && (globalThis as { __syRerunBug?: boolean }).__syRerunBug) {
      throw new UnrecoverableError('the bad deploy');
    }
    await ctx.step('note', async () => (await ctx.api.notes.create(conv, { body: `seen: ${event.data.body}` })).id);
  },
});
