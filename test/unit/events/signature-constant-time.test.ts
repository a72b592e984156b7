/**
 * Constant-time signature verification (src/events/signature.ts `verify`).
 *
 * 1. Structure (deterministic, the proof): `node:crypto` is observed, and for
 *    every well-formed header `verify` computes one HMAC and makes one
 *    `timingSafeEqual` over two 32-byte buffers per configured secret, whether
 *    no secret, the first, or the last one matched, and however many leading
 *    bytes of the given digest agree with the expected one. Nothing short-circuits.
 *    (A missing or malformed header is refused before any HMAC: that depends
 *    only on the header's public format, not on a secret.)
 * 2. Timing (statistical, robust): with 5 secrets, a loop that stopped at the
 *    first match would make "first secret matches" ~5x faster than "no secret
 *    matches". The median of paired (back-to-back) time ratios is compared
 *    with a generous band (0.4x-2.5x) that a 5x effect cannot fall into and
 *    noise does not leave.
 *    A byte-wise early exit inside one 32-byte compare is nanoseconds against
 *    microseconds of HMAC, below what timing can show; part 1 covers that.
 */
import fc from 'fast-check';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const calls = vi.hoisted(() => ({ compare: [] as [number, number][], hmac: 0 }));

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return {
    ...actual,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.compare.push([a.byteLength, b.byteLength]);
      return actual.timingSafeEqual(a, b);
    },
    createHmac: (...args: Parameters<typeof actual.createHmac>) => {
      calls.hmac++;
      return actual.createHmac(...args);
    },
  };
});

const { sign, verify } = await import('../../../src/events/signature.js');

/** A deliberately leaky verifier (stops at the first match), the positive control of the timing test. */
function shortCircuitVerify(secrets: readonly string[], bytes: Uint8Array, header: string): { ok: boolean } {
  for (const s of secrets) if (sign(s, bytes) === header) return { ok: true };
  return { ok: false };
}

const body = new Uint8Array(Buffer.from('{"id":"evt_ct","event":"message.received","data":{"id":1}}'));
const SECRETS = ['s0-current', 's1', 's2', 's3', 's4-oldest'];

/** A header whose digest agrees with `sign(secret, body)` in exactly `agree` leading bytes (32 = the real one). */
function headerAgreeing(secret: string, agree: number): string {
  const hex = sign(secret, body).slice('sha256='.length);
  if (agree >= 32) return `sha256=${hex}`;
  const bytes = Buffer.from(hex, 'hex');
  bytes[agree] = (bytes[agree] as number) ^ 0xff;
  return `sha256=${bytes.toString('hex')}`;
}

beforeEach(() => {
  calls.compare.length = 0;
  calls.hmac = 0;
});

describe('verify never short-circuits (structure)', () => {
  it.each([
    ['the first secret matches', sign(SECRETS[0] as string, body), { ok: true, secretIndex: 0 }],
    ['the last secret matches', sign(SECRETS[4] as string, body), { ok: true, secretIndex: 4 }],
    ['a middle secret matches', sign(SECRETS[2] as string, body), { ok: true, secretIndex: 2 }],
    ['no secret matches', sign('intruder', body), { ok: false, reason: 'mismatch' }],
    ['the first byte is wrong', headerAgreeing(SECRETS[0] as string, 0), { ok: false, reason: 'mismatch' }],
    ['only the last byte is wrong', headerAgreeing(SECRETS[0] as string, 31), { ok: false, reason: 'mismatch' }],
  ])('%s: one HMAC and one 32-byte timingSafeEqual per secret', (_label, header, expected) => {
    expect(verify(SECRETS, body, header)).toEqual(expected);
    expect(calls.hmac).toBe(SECRETS.length);
    expect(calls.compare).toEqual(SECRETS.map(() => [32, 32]));
  });

  it('holds for any number of secrets, any matching position and any count of agreeing leading bytes (fuzzed)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: -1, max: 7 }),
        fc.integer({ min: 0, max: 32 }),
        (secrets, which, agree) => {
          const secret = which >= 0 && which < secrets.length ? (secrets[which] as string) : 'not-configured-\u2603';
          const header = headerAgreeing(secret, agree);
          calls.compare.length = 0;
          calls.hmac = 0;
          const r = verify(secrets, body, header);
          expect(r.ok).toBe(secrets.includes(secret) && agree === 32);
          expect(calls.hmac).toBe(secrets.length);
          expect(calls.compare).toEqual(secrets.map(() => [32, 32]));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a missing or malformed header before computing any HMAC (depends only on the public format)', () => {
    for (const h of [undefined, '', 'sha256=', 'sha256=abc', `sha1=${'a'.repeat(40)}`, `sha256=${'g'.repeat(64)}`]) {
      expect(verify(SECRETS, body, h).ok).toBe(false);
    }
    expect(calls.hmac).toBe(0);
    expect(calls.compare).toEqual([]);
  });
});

describe('verify timing does not depend on which secret matched (statistical)', () => {
  it('median paired time ratio stays within 0.4x-2.5x for first / last / no secret matching (a short-circuit would be ~5x)', () => {
    const big = new Uint8Array(16 * 1024).fill(7);
    const headers = {
      first: sign(SECRETS[0] as string, big),
      last: sign(SECRETS[4] as string, big),
      none: sign('intruder', big),
    };
    const BATCH = 5;
    const ROUNDS = 150;
    const keys = Object.keys(headers) as (keyof typeof headers)[];
    const measure = (fn: (secrets: readonly string[], bytes: Uint8Array, header: string) => unknown) => {
      const time = (k: keyof typeof headers) => {
        const t0 = process.hrtime.bigint();
        for (let n = 0; n < BATCH; n++) fn(SECRETS, big, headers[k]);
        return Number(process.hrtime.bigint() - t0);
      };
      for (let i = 0; i < 5; i++) for (const k of keys) time(k); // warm-up
      // Paired ratios: each round times the three classes back to back (in a
      // rotating order), so drift (GC, a neighbour's load) cancels in the ratio;
      // the median of the per-round ratios is then compared.
      const ratios = { firstToNone: [] as number[], lastToNone: [] as number[], firstToLast: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        const t: Partial<Record<keyof typeof headers, number>> = {};
        for (let j = 0; j < keys.length; j++) {
          const k = keys[(round + j) % keys.length] as keyof typeof headers;
          t[k] = time(k);
        }
        ratios.firstToNone.push((t.first as number) / (t.none as number));
        ratios.lastToNone.push((t.last as number) / (t.none as number));
        ratios.firstToLast.push((t.first as number) / (t.last as number));
      }
      const median = (xs: number[]) => {
        const s = [...xs].sort((a, b) => a - b);
        return s[Math.floor(s.length / 2)] as number;
      };
      return { firstToNone: median(ratios.firstToNone), lastToNone: median(ratios.lastToNone), firstToLast: median(ratios.firstToLast) };
    };
    // The method's power: the same measurement of a loop that stops at the first match sees it.
    const leaky = measure(shortCircuitVerify);
    expect(leaky.firstToNone).toBeLessThan(0.4);
    const m = measure(verify);
    console.log(`[constant-time] reference short-circuiting loop: ${JSON.stringify(leaky)}`);
    console.log(`[constant-time] median paired time ratios over ${ROUNDS} rounds (16 KiB, 5 secrets): ${JSON.stringify(m)}`);
    for (const [name, ratio] of Object.entries(m)) {
      expect(ratio, name).toBeGreaterThan(0.4);
      expect(ratio, name).toBeLessThan(2.5);
    }
  });
});
