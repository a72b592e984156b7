/**
 * Token abilities of the API spec's Authentication table, plus `leads:read` and
 * `leads:write`, which the older overview endpoints require (the spec does not
 * show whether they are in the ability list; a lead handler still needs to say so).
 */
export const ABILITIES = [
  'contacts:read',
  'contacts:write',
  'contacts:delete',
  'conversations:read',
  'conversations:write',
  'messages:send',
  'deals:read',
  'deals:write',
  'orders:read',
  'orders:write',
  'products:read',
  'tasks:read',
  'tasks:write',
  'leads:read',
  'leads:write',
] as const;

/** One token ability (what `GET /me` lists and what a handler may declare it needs). */
export type Ability = (typeof ABILITIES)[number];
