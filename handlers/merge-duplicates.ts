/**
 * merge-duplicates — when a contact is created and an older contact has the
 * same email or phone, merge the new contact into the older one (the older
 * one survives). Off unless MERGE_DUPLICATES=true (or yes, 1, on).
 *
 * Calls: 1–2 reads (lookup by email, by phone) + at most 1 merge.
 * Needs contacts:delete (the spec requires it to merge) and, for the phone
 * lookup, the teammate's view-phone permission.
 */
import { z } from 'zod';
import { defineHandler, ForbiddenError, type Contact } from 'switchyard';

export default defineHandler({
  id: 'merge-duplicates',
  on: ['contact.created'],
  abilities: ['contacts:read', 'contacts:delete'],
  settings: z.object({
    // true/false, yes/no, 1/0, on/off
    MERGE_DUPLICATES: z.stringbool().default(false).describe('merge a new contact into an older one with its email or phone'),
  }),
  timeout: '2m',
  // Bulk work that nobody is waiting on: it gets the API budget after high and normal runs.
  priority: 'low',
  async handle(event, ctx) {
    if (!ctx.settings.MERGE_DUPLICATES) return;
    const created = event.data;
    const candidates: Contact[] = [];
    const collect = async (query: { email: string } | { phone: string }) => {
      candidates.push(...(await ctx.api.contacts.list({ ...query, per_page: 100 }).firstPage()).data);
    };
    if (created.email) await collect({ email: created.email });
    if (created.phone) {
      // The phone filter needs the view-phone permission (403 without it): then match by email only.
      await collect({ phone: created.phone }).catch((err: unknown) => {
        if (!(err instanceof ForbiddenError)) throw err;
        ctx.log.info('token may not filter by phone; matched by email only');
      });
    }

    const older = candidates
      .filter((c) => c.id !== created.id && Date.parse(c.created_at) <= Date.parse(created.created_at))
      .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.id - b.id)[0];
    if (!older) return;
    await ctx.api.contacts.merge({ survivor: older.id, loser: created.id });
    ctx.log.info({ survivor: older.id, loser: created.id }, 'duplicate contact merged');
  },
});
