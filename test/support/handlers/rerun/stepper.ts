/**
 * Re-run tests: three steps and a note on message.received.
 * - `lookup` returns the conversation id and counts its runs in `globalThis.__syRerunLookups`.
 * - `draft` returns the note's text: `globalThis.__syRerunDraft` when set (the "fixed" code), else `draft <body>`.
 * - the note is written, then the run fails once (retryable) when `globalThis.__syRerunFailOnce` is set (cleared).
 * - `finish` returns the note's id.
 * Each run is recorded in `globalThis.__syRerunRuns`: its delivery key, attempt and the results it got.
 */
import { defineHandler } from 'switchyard';

type G = { __syRerunLookups?: number; __syRerunDraft?: string; __syRerunFailOnce?: boolean; __syRerunRuns?: unknown[] };
const g = globalThis as G;

export default defineHandler({
  id: 'stepper',
  on: ['message.received'],
  abilities: ['conversations:write'],
  retry: { attempts: 3, backoff: { type: 'fixed', delay: '50ms' } },
  async handle(event, ctx) {
    const conv = await ctx.step('lookup', async () => {
      g.__syRerunLookups = (g.__syRerunLookups ?? 0) + 1;
      return event.data.conversation_id;
    });
    const text = await ctx.step('draft', async () => g.__syRerunDraft ?? `draft ${event.data.body}`);
    const note = await ctx.api.notes.create(conv, { body: text });
    if (g.__syRerunFailOnce) {
      g.__syRerunFailOnce = false;
      throw new Error('failing once after the note');
    }
    const done = await ctx.step('finish', async () => note.id);
    (g.__syRerunRuns ??= []).push({ key: ctx.delivery.key, attempt: ctx.delivery.attempt, conv, text, done });
  },
});
