import { parseAddress } from './contacts.js';

/** What a route's guard may read of a request before the route runs. */
export interface GateRequest {
  param(name: string): string | undefined;
  query(name: string): string | undefined;
  /** The parsed JSON body; undefined when absent or not JSON (the route then answers 400). */
  body: unknown;
}

/** Names the part of a request that needs the view-phone permission, or null when none does. */
export type PhoneUse = (req: GateRequest) => string | null;

const field = (body: unknown, name: string): unknown =>
  body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)[name] : undefined;

const isPhoneRef = (v: unknown): boolean => (typeof v === 'string' || typeof v === 'number') && parseAddress(v)?.kind === 'phone';

/**
 * Spec, Authentication 11: the phone filter, phone search rules and writing a
 * phone number need the view-phone permission; so does addressing a contact
 * by `phone:` (our choice: it would reveal who holds a number). These depend
 * only on the request, so the guard checks them before anything else,
 * Idempotency-Key replays included.
 */
export const phoneUse = {
  /** `GET /contacts?phone=`. */
  filter: ((r) => (r.query('phone') !== undefined ? 'The phone filter' : null)) as PhoneUse,
  /** A `phone:` address in the `{id}` of a contact path. */
  address: ((r) => (isPhoneRef(r.param('id')) ? 'Looking up a contact by phone' : null)) as PhoneUse,
  /** A contact write: `phone:` in the path, or a `phone` field in the body. */
  contactWrite: ((r) => phoneUse.address(r) ?? (field(r.body, 'phone') !== undefined ? 'Writing a phone number' : null)) as PhoneUse,
  /** Body fields naming a contact (`contact`, `survivor`, `loser`) by `phone:`. */
  bodyContacts:
    (...names: string[]): PhoneUse =>
    (r) =>
      names.some((n) => isPhoneRef(field(r.body, n))) ? 'Looking up a contact by phone' : null,
  /** A phone rule in the `match` groups of a search (a saved segment is checked when it runs). */
  rules: ((r) => {
    const groups = field(r.body, 'match');
    const rules = Array.isArray(groups) ? groups.flatMap((g: unknown): unknown[] => (Array.isArray(g) ? g : [])) : [];
    return rules.some((rule) => field(rule, 'attribute') === 'phone') ? 'A phone rule' : null;
  }) as PhoneUse,
};
