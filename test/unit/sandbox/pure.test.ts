import { describe, expect, it } from 'vitest';
import { parseAddress, phoneKey } from '../../../src/sandbox/domain/contacts.js';
import { backoffDelay, isDelivered } from '../../../src/sandbox/events/backoff.js';
import { canonicalBody, IdempotencyStore } from '../../../src/sandbox/idempotency-store.js';
import { money, toCents } from '../../../src/sandbox/money.js';
import { paginate } from '../../../src/sandbox/pagination.js';
import { BurstLimiter, nextMonthStart } from '../../../src/sandbox/rate-limit.js';
import { recordAt } from '../../../src/sandbox/validation.js';
import { maskPhone } from '../../../src/sandbox/views/contacts.js';

// Pure cores of the sandbox, without HTTP.
describe('pure sandbox logic', () => {
  it('finds a record by path id; anything but digits, or an unknown id, is 404 naming the kind', () => {
    const deals = new Map([
      [7, 'seven'],
      [1, 'one'],
    ]);
    expect(recordAt(deals, '7', 'Deal')).toBe('seven');
    expect(recordAt(deals, '0001', 'Deal')).toBe('one');
    for (const raw of ['8', '7.0', '-7', '7abc', ' 7', '']) {
      expect(() => recordAt(deals, raw, 'Deal'), raw).toThrow(expect.objectContaining({ status: 404, message: 'Deal not found' }));
    }
  });

  it('formats money as two-decimal strings from request numbers', () => {
    expect([money(toCents(12.5)), money(toCents(0.1 + 0.2)), money(0), money(-150), money(toCents(1999.999))]).toEqual([
      '12.50',
      '0.30',
      '0.00',
      '-1.50',
      '2000.00',
    ]);
  });

  it('doubles the back-off up to the cap; only 2xx counts as delivered', () => {
    const p = { baseMs: 200, maxMs: 1000, maxAttempts: 5, timeoutMs: 1 };
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(p, a))).toEqual([200, 400, 800, 1000, 1000]);
    expect([200, 202, 299, 300, 404, 503].map(isDelivered)).toEqual([true, true, true, false, false, false]);
  });

  it('canonicalises bodies and remembers keys for 24 h per scope', () => {
    expect(canonicalBody('{"b":1, "a":[2,{"d":1,"c":2}]}')).toBe(canonicalBody('{"a":[2,{"c":2,"d":1}],"b":1}'));
    const s = new IdempotencyStore(1000);
    expect(s.begin('w1', 'k', 'f', 0).kind).toBe('proceed');
    expect(s.begin('w1', 'k', 'f', 1).kind).toBe('in_flight');
    expect(s.begin('w2', 'k', 'f', 1).kind).toBe('proceed');
    s.complete('w1', 'k', 'f', { status: 201, body: '{}', contentType: null }, 10);
    expect(s.begin('w1', 'k', 'g', 11).kind).toBe('mismatch');
    expect(s.begin('w1', 'k', 'f', 1009).kind).toBe('replay');
    expect(s.begin('w1', 'k', 'f', 1010).kind).toBe('proceed');
  });

  it('limits per key in fixed windows and finds the next month start', () => {
    const b = new BurstLimiter(2, 10_000);
    expect([b.take('a', 0).allowed, b.take('a', 1).allowed, b.take('a', 2).allowed, b.take('b', 2).allowed]).toEqual([
      true,
      true,
      false,
      true,
    ]);
    expect(b.take('a', 2500).retryAfter).toBe(8);
    expect(b.take('a', 10_000).allowed).toBe(true);
    expect(new Date(nextMonthStart(Date.parse('2030-12-31T23:59:59Z'))).toISOString()).toBe('2031-01-01T00:00:00.000Z');
  });

  it('parses contact addresses and phone keys, masks phones', () => {
    expect(parseAddress('42')).toEqual({ kind: 'id', id: 42 });
    expect(parseAddress('id:7')).toEqual({ kind: 'id', id: 7 });
    expect(parseAddress('EMAIL:a@b.co')).toEqual({ kind: 'email', email: 'a@b.co' });
    expect(parseAddress('phone:+20 100')).toEqual({ kind: 'phone', phone: '+20 100' });
    expect([parseAddress('id:x'), parseAddress('foo:1'), parseAddress(1.5)]).toEqual([null, null, null]);
    expect(phoneKey('+20 (100) 123-4567')).toBe(phoneKey('01001234567'));
    expect(maskPhone('+20 100 123 4567')).toBe('+** *** *** 4567');
  });

  it('pages by sort key so inserts between pages do not shift them', () => {
    const rows = [1, 2, 3, 4, 5].map((id) => ({ id, createdAt: id }));
    const key = (r: { id: number; createdAt: number }) => [-r.createdAt, -r.id];
    const p1 = paginate(rows, key, (r) => r.id, { perPage: 2 });
    expect(p1.data).toEqual([5, 4]);
    rows.push({ id: 6, createdAt: 6 });
    const p2 = paginate(rows, key, (r) => r.id, { perPage: 2, cursor: p1.meta.next_cursor! });
    expect(p2.data).toEqual([3, 2]);
    const p3 = paginate(rows, key, (r) => r.id, { perPage: 2, cursor: p2.meta.next_cursor! });
    expect([p3.data, p3.meta.next_cursor]).toEqual([[1], null]);
  });
});
