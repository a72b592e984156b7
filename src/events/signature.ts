import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { SIGNATURE_PREFIX } from '../spec/index.js';

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

export type VerifyFailure = 'missing' | 'malformed' | 'mismatch';

export type VerifyResult = { readonly ok: true; readonly secretIndex: number } | { readonly ok: false; readonly reason: VerifyFailure };

/**
 * HMAC keys prepared once per list of configured secrets (`createHmac` with a
 * string re-encodes and re-imports the key on every call). Keyed by the list
 * itself, so the keys live exactly as long as the configuration that holds
 * them, and `sign` (any ad-hoc secret) caches nothing.
 */
const KEYS = new WeakMap<readonly string[], { of: string[]; keys: KeyObject[] }>();

function keysFor(secrets: readonly string[]): KeyObject[] {
  const cached = KEYS.get(secrets);
  // The list is normally never changed in place; if it is, the keys follow it.
  if (cached && cached.of.length === secrets.length && cached.of.every((s, i) => s === secrets[i])) return cached.keys;
  const keys = secrets.map((secret) => createSecretKey(Buffer.from(secret, 'utf8')));
  KEYS.set(secrets, { of: [...secrets], keys });
  return keys;
}

function digest(key: string | KeyObject, bytes: Uint8Array): Buffer {
  return createHmac('sha256', key).update(bytes).digest();
}

/** `sha256=` + lowercase hex HMAC-SHA256 of the exact bytes (strings are UTF-8 encoded). */
export function sign(secret: string, bytes: Uint8Array | string): string {
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  return SIGNATURE_PREFIX + digest(secret, data).toString('hex');
}

/**
 * Verifies `header` against every secret (rotation: any one may match).
 * Every secret is tried, whatever matched earlier, and each comparison is a
 * `timingSafeEqual` over two 32-byte buffers, so the time taken does not
 * depend on which secret matched or on how many leading bytes agree.
 */
export function verify(secrets: readonly string[], bytes: Uint8Array, header: string | null | undefined): VerifyResult {
  if (header === undefined || header === null || header.trim() === '') return { ok: false, reason: 'missing' };
  const value = header.trim();
  if (!value.toLowerCase().startsWith(SIGNATURE_PREFIX)) return { ok: false, reason: 'malformed' };
  const hex = value.slice(SIGNATURE_PREFIX.length);
  if (!HEX_DIGEST.test(hex)) return { ok: false, reason: 'malformed' };
  const given = Buffer.from(hex, 'hex');

  let matched = -1;
  const keys = keysFor(secrets);
  for (let i = 0; i < keys.length; i++) {
    const expected = digest(keys[i] as KeyObject, bytes);
    // Both buffers are 32 bytes; no branch on the comparison result other than recording it.
    const equal = timingSafeEqual(expected, given);
    matched = equal && matched < 0 ? i : matched;
  }
  return matched >= 0 ? { ok: true, secretIndex: matched } : { ok: false, reason: 'mismatch' };
}
