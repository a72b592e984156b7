/**
 * lead-won — when a lead is won, move its contact to the won lifecycle stage
 * and label the contact as a customer.
 *
 * Settings:
 *   WON_STAGE       stage id or exact name (default "Customer"). The API cannot
 *                   list lifecycle stages (spec: discovering workspace
 *                   identifiers is unavailable), so name your won-outcome stage
 *                   here when it is not called "Customer".
 *   LEAD_WON_LABEL  label id or exact name to add (default "customer").
 * A stage or label that does not exist in the workspace is a configuration
 * error: the job is dead-lettered with that reason (fix the setting, then
 * `switchyard dlq retry`).
 * Calls: 2 writes (lifecycle, labels); both are no-ops when already applied.
 */
import { z } from 'zod';
import { defineHandler, HandlerConfigError, ValidationError } from 'switchyard';

/** A numeric setting addresses by id, anything else by exact name. */
const ref = (v: string): string | number => (/^\d+$/.test(v) ? Number(v) : v);

export default defineHandler({
  id: 'lead-won',
  on: ['lead.won'],
  abilities: ['contacts:write'],
  settings: z.object({
    WON_STAGE: z.string().trim().min(1).default('Customer').describe('lifecycle stage id or exact name'),
    LEAD_WON_LABEL: z.string().trim().min(1).default('customer').describe('label id or exact name'),
  }),
  timeout: '2m',
  async handle(event, ctx) {
    const { WON_STAGE, LEAD_WON_LABEL } = ctx.settings;
    const contactId = event.data.contact_id;
    try {
      const moved = await ctx.step('lifecycle', () => ctx.api.contacts.setLifecycle(contactId, ref(WON_STAGE)));
      if (moved.lifecycle.outcome !== 'won') ctx.log.warn({ stage: moved.lifecycle.name }, 'WON_STAGE is not a stage with outcome "won"');
    } catch (err) {
      if (err instanceof ValidationError)
        throw new HandlerConfigError(
          `lifecycle stage "${WON_STAGE}" does not exist in the workspace; set WON_STAGE to a stage id or exact name`,
        );
      throw err;
    }
    try {
      await ctx.step('label', () => ctx.api.contacts.labels.add(contactId, [ref(LEAD_WON_LABEL)]));
    } catch (err) {
      if (err instanceof ValidationError)
        throw new HandlerConfigError(`label "${LEAD_WON_LABEL}" does not exist in the workspace; create it or set LEAD_WON_LABEL`);
      throw err;
    }
  },
});
