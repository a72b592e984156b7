/**
 * away-reply — outside business hours, answer an inbound customer message with
 * AWAY_MESSAGE, once per conversation per closed period. Never answers notes
 * or outbound messages (its own included). Off unless BUSINESS_HOURS is set.
 *
 * Settings (read at start-up: a bad BUSINESS_HOURS stops it, naming the problem):
 *   BUSINESS_HOURS  e.g. "Mon-Fri 09:00-17:00 Europe/Berlin" (ranges joined by ";")
 *   AWAY_MESSAGE    text to send (default below)
 * Retries: 5 attempts (about 30 s of back-off), as a late away message is no use.
 * Flow: priority high (a customer is waiting); maxAge 10 minutes (after an
 * outage, a reply hours late is wrong: such runs are skipped, logged and counted).
 * Calls, outside hours only: 1 read (the thread's latest messages) + at most 1 send.
 * "Once per period" holds across deliveries: the thread is checked for the
 * away message since the period began, and the send's Idempotency-Key is
 * derived from (conversation, period), so two messages arriving together
 * still produce one reply.
 */
import { z } from 'zod';
import { businessHoursSetting, closedPeriodStart, defineHandler } from 'switchyard';

export default defineHandler({
  id: 'away-reply',
  on: ['message.received'],
  abilities: ['conversations:read', 'messages:send'],
  settings: z.object({
    BUSINESS_HOURS: businessHoursSetting().optional().describe('e.g. "Mon-Fri 09:00-17:00 Europe/Berlin"; unset: off'),
    AWAY_MESSAGE: z
      .string()
      .trim()
      .min(1)
      .max(4096)
      .default("Thanks for your message! We're away right now and will reply when we're back."),
  }),
  // A late away message is no use: give up after about 30 s of back-off (2, 4, 8, 16 s) instead of ~17 minutes.
  retry: { attempts: 5, backoff: { type: 'exponential', delay: '2s' } },
  timeout: '1m',
  // A customer is waiting: this run takes the next API slot before normal and low work.
  priority: 'high',
  // A reply hours late after an outage is wrong: skip (logged and counted) what is older than this.
  maxAge: '10m',
  async handle(event, ctx) {
    const { BUSINESS_HOURS: hours, AWAY_MESSAGE } = ctx.settings;
    if (!hours) return; // off
    const message = event.data;
    if (message.type !== 'message' || message.direction !== 'inbound') return;

    const at = new Date(message.created_at);
    const periodStart = closedPeriodStart(hours, Number.isNaN(at.getTime()) ? new Date() : at);
    if (!periodStart) return; // within business hours

    const latest = await ctx.api.messages.list(message.conversation_id, { per_page: 20 }).firstPage();
    const already = latest.data.some(
      (m) => m.direction === 'outbound' && m.body === AWAY_MESSAGE && Date.parse(m.created_at) >= periodStart.getTime(),
    );
    if (already) return;
    await ctx.api.messages.sendText(
      message.conversation_id,
      AWAY_MESSAGE,
      {},
      {
        idempotencyKey: `away-reply:${message.conversation_id}:${periodStart.toISOString()}`,
      },
    );
    ctx.log.info({ conversation: message.conversation_id }, 'away message sent');
  },
});
