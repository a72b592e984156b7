import { RequestValidationError } from '../errors.js';

/**
 * A contact address: its id, or an identifier the caller already holds
 * (`id:<n>`, `email:<address>`, `phone:<number>`). Sent URL-encoded.
 */
export type ContactRef = number | `id:${number}` | `email:${string}` | `phone:${string}`;

const REF = /^(id:\d+|email:.+|phone:.+)$/;

/** Path segment of a contact reference, validated and URL-encoded. */
export function contactRefPath(op: string, ref: ContactRef, field = 'contact'): string {
  if (typeof ref === 'number') {
    if (!Number.isInteger(ref) || ref < 1)
      throw new RequestValidationError(field, 'a positive integer id or id:/email:/phone: identifier', op);
    return String(ref);
  }
  if (typeof ref !== 'string' || !REF.test(ref))
    throw new RequestValidationError(field, 'an id or an identifier id:<n>, email:<address>, phone:<number>', op);
  return encodeURIComponent(ref);
}

/** Path of a contact, `/contacts/<ref>`. */
export function contactPath(op: string, ref: ContactRef): string {
  return `/contacts/${contactRefPath(op, ref)}`;
}
