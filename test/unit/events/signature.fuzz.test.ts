/**
 * Fuzzing of signature-header parsing (`verify`, src/events/signature.ts): total over
 * every input (never throws, always a typed result) and never accepts a
 * signature made with another secret or over other bytes.
 *
 * Secrets are drawn from printable text: HMAC pads short keys with zero bytes,
 * so "k" and "k\0" are the same key by design of HMAC (RFC 2104), not a flaw
 * of `verify`; printable secrets keep "another secret" meaningful.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sign, verify, type VerifyResult } from '../../../src/events/signature.js';

const secret = fc.string({ minLength: 1, maxLength: 40 });
const secrets = fc.array(secret, { minLength: 1, maxLength: 4 });
const bytes = fc.uint8Array({ maxLength: 512 });
const HEX = '0123456789abcdef';
const hex64 = fc.array(fc.constantFrom(...HEX.split('')), { minLength: 64, maxLength: 64 }).map((a) => a.join(''));

/** Header-ish strings: random text, near-misses of the format, and real signatures. */
const headerLike = fc.oneof(
  fc.string({ maxLength: 120 }),
  fc.string({ unit: 'binary', maxLength: 120 }),
  hex64.map((h) => `sha256=${h}`),
  hex64.map((h) => `SHA256=${h.toUpperCase()}`),
  fc.tuple(hex64, fc.integer({ min: 0, max: 70 })).map(([h, n]) => `sha256=${h.slice(0, n)}`),
  fc.tuple(hex64, fc.string({ minLength: 1, maxLength: 4 })).map(([h, extra]) => `sha256=${h}${extra}`),
  hex64.map((h) => `sha1=${h.slice(0, 40)}`),
  hex64.map((h) => `t=123,v1=${h}`),
  hex64.map((h) => `sha256=${h},sha256=${h}`),
  fc.constantFrom('', ' ', 'sha256=', 'sha256', '=', '\u0000', 'sha256=\u0000'),
);

function isTyped(r: VerifyResult): boolean {
  return r.ok ? Number.isInteger(r.secretIndex) : ['missing', 'malformed', 'mismatch'].includes(r.reason);
}

const RUNS = { numRuns: 1_000 };

describe('verify (fuzzed)', () => {
  it('never throws and always answers a typed result, whatever the header, secrets and bytes', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }), { maxLength: 4 }), bytes, fc.option(headerLike, { nil: undefined }), (s, b, h) => {
        const r = verify(s, b, h);
        expect(isTyped(r)).toBe(true);
        if (r.ok) expect(r.secretIndex).toBeLessThan(s.length);
      }),
      RUNS,
    );
  });

  it('never accepts a header that is not sha256= followed by 64 hex digits (modulo surrounding space and case)', () => {
    fc.assert(
      fc.property(secrets, bytes, headerLike, (s, b, h) => {
        const r = verify(s, b, h);
        if (r.ok) expect(h.trim()).toMatch(/^sha256=[0-9a-f]{64}$/i);
      }),
      RUNS,
    );
  });

  it('accepts the signature of any configured secret over the same bytes, reporting the first secret that matches', () => {
    fc.assert(
      fc.property(secrets, bytes, fc.nat(), fc.constantFrom('', ' ', '\t'), fc.boolean(), (s, b, pick, pad, upper) => {
        const i = pick % s.length;
        const sig = sign(s[i] as string, b);
        const header = pad + (upper ? sig.toUpperCase() : sig) + pad;
        expect(verify(s, b, header)).toEqual({ ok: true, secretIndex: s.indexOf(s[i] as string) });
      }),
      RUNS,
    );
  });

  it('never accepts a signature made with a secret that is not configured', () => {
    fc.assert(
      fc.property(secrets, secret, bytes, (s, other, b) => {
        fc.pre(!s.includes(other));
        expect(verify(s, b, sign(other, b))).toEqual({ ok: false, reason: 'mismatch' });
      }),
      RUNS,
    );
  });

  it('never accepts a signature made over other bytes', () => {
    fc.assert(
      fc.property(secrets, bytes, bytes, (s, signed, sent) => {
        fc.pre(!Buffer.from(signed).equals(Buffer.from(sent)));
        expect(verify(s, sent, sign(s[0] as string, signed))).toEqual({ ok: false, reason: 'mismatch' });
      }),
      RUNS,
    );
  });

  it('never accepts a genuine signature with any one hex digit changed', () => {
    fc.assert(
      fc.property(secrets, bytes, fc.nat(63), fc.nat(15), (s, b, pos, d) => {
        const sig = sign(s[0] as string, b);
        const at = 'sha256='.length + pos;
        const orig = sig[at] as string;
        const repl = HEX[(HEX.indexOf(orig) + 1 + (d % 15)) % 16] as string;
        const tampered = sig.slice(0, at) + repl + sig.slice(at + 1);
        expect(verify(s, b, tampered)).toEqual({ ok: false, reason: 'mismatch' });
      }),
      RUNS,
    );
  });

  it('accepts nothing when no secret is configured', () => {
    fc.assert(
      fc.property(secret, bytes, (s, b) => {
        expect(verify([], b, sign(s, b))).toEqual({ ok: false, reason: 'mismatch' });
      }),
      { numRuns: 200 },
    );
  });
});
