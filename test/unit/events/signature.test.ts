import { sign as octokitSign } from '@octokit/webhooks-methods';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sign, verify } from '../../../src/events/signature.js';

const enc = (s: string) => Buffer.from(s, 'utf8');

describe('sign', () => {
  it("matches GitHub's published test vector for the same scheme", () => {
    expect(sign("It's a Secret to Everybody", enc('Hello, World!'))).toBe(
      'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    );
  });

  it('agrees with @octokit/webhooks-methods on random bodies, multi-byte UTF-8 included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }),
        async (secret, body) => {
          expect(sign(secret, enc(body))).toBe(await octokitSign(secret, body));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('signs strings as their UTF-8 bytes', () => {
    expect(sign('k', 'Zoë 😀')).toBe(sign('k', enc('Zoë 😀')));
  });
});

describe('verify', () => {
  const body = enc('{"id":"evt_1"}');

  it('returns the index of the secret that matched (rotation)', () => {
    expect(verify(['new', 'old'], body, sign('new', body))).toEqual({ ok: true, secretIndex: 0 });
    expect(verify(['new', 'old'], body, sign('old', body))).toEqual({ ok: true, secretIndex: 1 });
  });

  it('follows a secrets list changed in place (its prepared keys are not stale)', () => {
    const secrets = ['first'];
    expect(verify(secrets, body, sign('first', body)).ok).toBe(true);
    secrets[0] = 'second';
    expect(verify(secrets, body, sign('first', body))).toEqual({ ok: false, reason: 'mismatch' });
    expect(verify(secrets, body, sign('second', body))).toEqual({ ok: true, secretIndex: 0 });
    secrets.push('third');
    expect(verify(secrets, body, sign('third', body))).toEqual({ ok: true, secretIndex: 1 });
  });

  it('accepts upper-case hex and surrounding whitespace', () => {
    const sig = sign('s', body);
    expect(verify(['s'], body, ` sha256=${sig.slice(7).toUpperCase()} `).ok).toBe(true);
  });

  it.each([
    [undefined, 'missing'],
    [null, 'missing'],
    ['', 'missing'],
    ['   ', 'missing'],
    ['sha1=abcdef', 'malformed'],
    ['sha256=', 'malformed'],
    ['sha256=xyz', 'malformed'],
    [`sha256=${'a'.repeat(63)}`, 'malformed'],
    [`sha256=${'a'.repeat(65)}`, 'malformed'],
    [`sha256=${'a'.repeat(64)}`, 'mismatch'],
  ])('refuses %j as %s', (header, reason) => {
    expect(verify(['s'], body, header)).toEqual({ ok: false, reason });
  });

  it('refuses a body changed by one byte', () => {
    const sig = sign('s', body);
    const changed = Buffer.from(body);
    changed[3] = (changed[3] ?? 0) ^ 1;
    expect(verify(['s'], changed, sig)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuses everything when no secret is configured', () => {
    expect(verify([], body, sign('s', body))).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('never accepts a signature made with another secret (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), fc.uint8Array({ maxLength: 200 }), (a, b, bytes) => {
        fc.pre(a !== b);
        expect(verify([a], bytes, sign(b, bytes)).ok).toBe(false);
        expect(verify([a], bytes, sign(a, bytes)).ok).toBe(true);
      }),
    );
  });

  it('never throws on arbitrary header strings (fuzz)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.uint8Array({ maxLength: 64 }), (header, bytes) => {
        const r = verify(['s'], bytes, header);
        expect(r.ok).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
});
