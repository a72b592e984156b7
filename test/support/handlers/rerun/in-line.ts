/**
 * Re-run tests: ordered per conversation, skipStale and a one-minute maxAge (conversation.opened). A run whose
 * subject is `slow` waits until `globalThis.__syRerunGate` resolves. Each run is recorded in `__syRerunLine`.
 */
import { defineHandler } from 'switchyard';

const g = globalThis as { __syRerunGate?: Promise<void>; __syRerunLine?: { subject: string | null; at: string }[] };

export default defineHandler({
  id: 'in-line',
  on: ['conversation.opened', 'conversation.assigned'],
  orderBy: 'conversation',
  skipStale: true,
  maxAge: '1m',
  async handle(event) {
    (g.__syRerunLine ??= []).push({ subject: event.data.subject, at: 'start' });
    if (event.data.subject === 'slow') await g.__syRerunGate;
    g.__syRerunLine.push({ subject: event.data.subject, at: 'done' });
  },
});
