/** Re-run tests: debounced per contact; each run recorded in `globalThis.__syRerunBursts` with the stage and burst count. */
import { defineHandler } from 'switchyard';

const g = globalThis as { __syRerunBursts?: { stage: string; count: number | null }[] };

export default defineHandler({
  id: 'bursty',
  on: ['contact.lifecycle_changed'],
  debounce: { key: 'contact', wait: '300ms', maxWait: '1s' },
  async handle(event, ctx) {
    (g.__syRerunBursts ??= []).push({ stage: event.data.lifecycle.name, count: ctx.debounced?.count ?? null });
  },
});
