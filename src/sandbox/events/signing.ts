import { createHmac } from 'node:crypto';
import { SIGNATURE_PREFIX } from '../../spec/index.js';

/**
 * The signature header's value for a delivery: the prefix and the hex
 * HMAC-SHA256 of the exact body bytes. The sandbox signs with its own reading
 * of the rule rather than the receiver's code, so a receiver tested against it
 * is checked against a second implementation.
 */
export function signatureOf(body: Uint8Array, secret: string): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(body).digest('hex');
}
