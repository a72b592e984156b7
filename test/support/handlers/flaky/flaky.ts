import { defineHandler, NonRetriableError } from 'switchyard';

/** Fails for good while `globalThis.__syFlakyBroken` is set (the "broken handler" of the dlq tests). */
export default defineHandler({
  id: 'flaky',
  on: ['lead.won'],
  async handle(event) {
    if ((globalThis as { __syFlakyBroken?: boolean }).__syFlakyBroken) throw new NonRetriableError(`broken on lead ${event.data.id}`);
  },
});
