/**
 * sla-escalation — an inbound customer message that gets no agent reply within
 * SLA_MINUTES business minutes: assign the conversation to SLA_ASSIGNEE and
 * add an internal note mentioning them. A reply (message.sent in that
 * conversation; an internal note counts too) or a close (conversation.closed)
 * ends it: nothing is written. Off unless SLA_ASSIGNEE is set.
 *
 * Settings (read at start-up: a bad value stops it, naming the problem):
 *   SLA_ASSIGNEE    teammate id to escalate to; unset: off
 *   SLA_MINUTES     minutes of business time the customer may wait (default 60)
 *   BUSINESS_HOURS  e.g. "Mon-Fri 09:00-17:00 Europe/Berlin"; unset: every minute counts
 * A workflow over time (docs/handlers.md, "Workflows over time"): the run waits
 * for the reply without holding a worker slot, surviving restarts. The wait
 * lasts as long as SLA_MINUTES of open time after the message's receipt (a run
 * that starts late ends as much later). A reply that came while the run was
 * still queued counts too (the wait's lookback). After the deadline: 1 read
 * (still open, and not escalated by an earlier message's run?) + 2 writes,
 * each in a step, so a woken or retried run never writes twice.
 */
import { z } from 'zod';
import { addBusinessTime, businessHoursSetting, defineHandler } from 'switchyard';

const MINUTE = 60_000;

export default defineHandler({
  id: 'sla-escalation',
  on: ['message.received'],
  abilities: ['conversations:read', 'conversations:write'],
  settings: z.object({
    SLA_ASSIGNEE: z.coerce
      .number('expected a teammate id')
      .int()
      .positive('expected a teammate id')
      .optional()
      .describe('teammate id to escalate to; unset: off'),
    SLA_MINUTES: z.coerce
      .number('expected a number of minutes')
      .positive('expected a positive number of minutes')
      .max(100_000)
      .default(60)
      .describe('business minutes a customer may wait for a reply'),
    BUSINESS_HOURS: businessHoursSetting().optional().describe('e.g. "Mon-Fri 09:00-17:00 Europe/Berlin"; unset: every minute counts'),
  }),
  // Closing the conversation while the run waits cancels it (recorded `cancelled`; nothing after the wait runs).
  cancelOn: [{ event: 'conversation.closed', match: 'conversation' }],
  // Replies are kept from start-up, so even the first run's wait sees one sent before it began.
  waitsFor: ['message.sent'],
  async handle(event, ctx) {
    const { SLA_ASSIGNEE: assignee, SLA_MINUTES, BUSINESS_HOURS: hours } = ctx.settings;
    if (assignee === undefined) return; // off
    const message = event.data;
    if (message.type !== 'message' || message.direction !== 'inbound') return;

    // The deadline: SLA_MINUTES of open time after the message was received (the same on every run: from ctx.delivery).
    const received = new Date(ctx.delivery.receivedAt);
    const due = hours ? addBusinessTime(hours, received, SLA_MINUTES * MINUTE) : new Date(received.getTime() + SLA_MINUTES * MINUTE);
    // A message sent in this conversation (a teammate's reply, or an internal note: someone is on it); one that
    // came while this run was still queued counts too (lookback, on by default).
    const reply = await ctx.waitForEvent('agent-reply', {
      event: 'message.sent',
      match: 'conversation',
      timeout: due.getTime() - received.getTime(),
    });
    if (reply) return; // answered in time

    const id = message.conversation_id;
    const conversation = await ctx.step('conversation', async () => ctx.api.conversations.get(id));
    if (conversation.status === 'closed') return;
    if (conversation.assignee?.type === 'user' && conversation.assignee.id === assignee) return; // escalated already (an earlier message's run)
    await ctx.step('assign', async () => (await ctx.api.conversations.assign(id, { type: 'user', id: assignee })).id);
    await ctx.step(
      'note',
      async () =>
        (
          await ctx.api.notes.create(id, {
            body: `No reply within ${SLA_MINUTES} business minutes of the customer's message: escalated.`,
            mentions: [assignee],
          })
        ).id,
    );
    ctx.log.info({ conversation: id, assignee }, 'SLA missed; conversation escalated');
  },
});
