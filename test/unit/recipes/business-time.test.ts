import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isOpen, parseBusinessHours } from '../../../src/recipes/business-hours.js';
import { addBusinessTime, businessTimeBetween } from '../../../src/recipes/business-time.js';

const MIN = 60_000;
const berlin = parseBusinessHours('Mon-Fri 09:00-17:00 Europe/Berlin');
const iso = (d: Date) => d.toISOString();

describe('addBusinessTime', () => {
  it('counts within one open stretch', () => {
    // Wed 25 Nov 2026 10:00 Berlin (09:00Z) + 15 business minutes
    expect(iso(addBusinessTime(berlin, new Date('2026-11-25T09:00:00Z'), 15 * MIN))).toBe('2026-11-25T09:15:00.000Z');
  });

  it('carries what is left over the night and the weekend', () => {
    // Fri 16:50 Berlin + 15 min → Mon 09:05 Berlin
    expect(iso(addBusinessTime(berlin, new Date('2026-11-27T15:50:00Z'), 15 * MIN))).toBe('2026-11-30T08:05:00.000Z');
    // Tue 16:30 + 1 h → Wed 09:30
    expect(iso(addBusinessTime(berlin, new Date('2026-11-24T15:30:00Z'), 60 * MIN))).toBe('2026-11-25T08:30:00.000Z');
  });

  it('starts counting at the next opening from a closed time', () => {
    // Sat 12:00 Berlin + 15 min → Mon 09:15 Berlin
    expect(iso(addBusinessTime(berlin, new Date('2026-11-28T11:00:00Z'), 15 * MIN))).toBe('2026-11-30T08:15:00.000Z');
    expect(iso(addBusinessTime(berlin, new Date('2026-11-28T11:00:00Z'), 0))).toBe('2026-11-30T08:00:00.000Z');
    expect(iso(addBusinessTime(berlin, new Date('2026-11-25T09:00:00Z'), 0))).toBe('2026-11-25T09:00:00.000Z');
  });

  it('keeps to the wall clock across a change of the clocks', () => {
    // Fri 27 Mar 2026 16:30 CET + 1 h → Mon 30 Mar 09:30 CEST (07:30Z); DST began Sun 29 Mar.
    expect(iso(addBusinessTime(berlin, new Date('2026-03-27T15:30:00Z'), 60 * MIN))).toBe('2026-03-30T07:30:00.000Z');
    // Fri 23 Oct 2026 16:30 CEST + 1 h → Mon 26 Oct 09:30 CET (08:30Z)
    expect(iso(addBusinessTime(berlin, new Date('2026-10-23T14:30:00Z'), 60 * MIN))).toBe('2026-10-26T08:30:00.000Z');
  });

  it('walks several ranges a day and whole weeks', () => {
    const split = parseBusinessHours('Mon-Fri 09:00-12:00; Mon-Fri 13:00-17:00 UTC');
    expect(iso(addBusinessTime(split, new Date('2026-11-25T11:30:00Z'), 60 * MIN))).toBe('2026-11-25T13:30:00.000Z');
    // 40 business hours = one full week of 8-hour days
    expect(iso(addBusinessTime(parseBusinessHours('Mon-Fri 09:00-17:00 UTC'), new Date('2026-11-23T09:00:00Z'), 40 * 60 * MIN))).toBe(
      '2026-11-27T17:00:00.000Z',
    );
  });

  it('refuses a bad duration', () => {
    expect(() => addBusinessTime(berlin, new Date(), -1)).toThrow(/duration must be/);
    expect(() => addBusinessTime(berlin, new Date(), Number.NaN)).toThrow(/duration must be/);
  });

  it('lands on an open instant with exactly the asked open time behind it (property)', () => {
    const zones = ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'UTC'];
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('2026-01-01T00:00:00Z'), max: Date.parse('2027-12-31T00:00:00Z') }),
        fc.integer({ min: 1, max: 5 * 24 * 60 }),
        fc.constantFrom(...zones),
        (start, minutes, zone) => {
          const hours = parseBusinessHours(`Mon-Fri 08:30-18:00; Sat 10:00-14:00 ${zone}`);
          const from = new Date(start);
          const due = addBusinessTime(hours, from, minutes * MIN);
          expect(businessTimeBetween(hours, from, due)).toBe(minutes * MIN);
          expect(isOpen(hours, new Date(due.getTime() - 1))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('counts the real hours of a night the clocks change (property, ranges across 02:00–03:00)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('2026-03-27T00:00:00Z'), max: Date.parse('2026-03-30T00:00:00Z') }),
        fc.integer({ min: 1, max: 12 * 60 }),
        fc.constantFrom(
          'Sun 01:00-04:00; Mon-Sat 09:00-17:00 Europe/Berlin',
          'Mon-Sun 00:00-24:00 Europe/Berlin',
          'Sat-Sun 00:30-05:00 America/New_York',
        ),
        (start, minutes, text) => {
          const hours = parseBusinessHours(text);
          const from = new Date(start);
          const due = addBusinessTime(hours, from, minutes * MIN);
          expect(businessTimeBetween(hours, from, due)).toBe(minutes * MIN);
        },
      ),
      { numRuns: 300 },
    );
    // Sunday 29 Mar 2026 01:00–04:00 Berlin is two real hours (02:00–03:00 does not exist).
    const night = parseBusinessHours('Sun 01:00-04:00 Europe/Berlin');
    expect(businessTimeBetween(night, new Date('2026-03-28T00:00:00Z'), new Date('2026-03-30T00:00:00Z'))).toBe(120 * MIN);
  });
});

describe('businessTimeBetween', () => {
  it('counts only open time', () => {
    // Fri 16:00 → Mon 10:00 Berlin: 1 h Friday + 1 h Monday
    expect(businessTimeBetween(berlin, new Date('2026-11-27T15:00:00Z'), new Date('2026-11-30T09:00:00Z'))).toBe(120 * MIN);
    expect(businessTimeBetween(berlin, new Date('2026-11-30T09:00:00Z'), new Date('2026-11-27T15:00:00Z'))).toBe(0);
  });
});
