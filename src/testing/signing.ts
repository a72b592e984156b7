import { sign as signWith } from '../events/index.js';

/**
 * The signature header's value for `body`, as the workspace signs it:
 * `sha256=` + the hex HMAC-SHA256 of the exact bytes (a string is UTF-8
 * encoded) with `secret`. Same order as `signDelivery`: what is signed, then the secret.
 */
export function signBody(body: Uint8Array | string, secret: string): string {
  return signWith(secret, body);
}

/**
 * @deprecated Use `signBody(body, secret)` (what is signed first, as in
 * `signDelivery(delivery, secret)`); this name goes in the next release.
 */
export function sign(secret: string, body: Uint8Array | string): string {
  return signWith(secret, body);
}
