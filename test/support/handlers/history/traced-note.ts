/**
 * History tests: a handler whose message body says what to do.
 * - `retry-me`: a step, a note, then a retryable failure on the first attempt
 *   (the second attempt takes the step from the store and its note is a replay).
 * - `dead-me`: a note on a conversation that does not exist (404: dead-lettered).
 * - `pii-me`: looks a contact up by email, then fails for good quoting an email and a phone.
 * - `many-calls`: 45 notes in one run (more calls than history keeps per attempt).
 * - `fail-always`: a retryable failure on every attempt while `globalThis.__syTracedBroken` is set
 *   (dead-lettered when its attempts are used up); a note once it is cleared.
 * - anything else: a step and one note.
 */
import { defineHandler, UnrecoverableError } from 'switchyard';

export default defineHandler({
  id: 'traced-note',
  on: ['message.received'],
  abilities: ['conversations:write', 'contacts:read'],
  retry: { attempts: 3, backoff: { type: 'fixed', delay: '50ms' } },
  async handle(event, ctx) {
    const text = event.data.body;
    const conv = await ctx.step('conversation', async () => event.data.conversation_id);
    if (text.includes('dead-me')) {
      await ctx.api.notes.create(987_654_321, { body: 'nowhere' });
      return;
    }
    if (text.includes('fail-always') && (globalThis as { __syTracedBroken?: boolean }).__syTracedBroken) {
      throw new Error(`still broken on attempt ${ctx.delivery.attempt}`);
    }
    if (text.includes('pii-me')) {
      await ctx.api.contacts.get('email:alice.pii@example.com').catch(() => undefined);
      throw new UnrecoverableError('cannot reach alice.pii@example.com or +49 30 1234567');
    }
    const n = text.includes('many-calls') ? 45 : 1;
    for (let i = 0; i < n; i++) await ctx.api.notes.create(conv, { body: `seen ${i}` });
    if (text.includes('retry-me') && ctx.delivery.attempt === 1) throw new Error('transient failure after writing');
  },
});
