import { describe, expect, it } from 'vitest';
import { BusinessHoursError, closedPeriodStart, isOpen, parseBusinessHours } from '../../../src/recipes/business-hours.js';

describe('business hours', () => {
  const berlin = parseBusinessHours('Mon-Fri 09:00-17:00 Europe/Berlin');

  it('is open on a weekday afternoon in the zone and closed at night and at weekends', () => {
    expect(isOpen(berlin, new Date('2026-11-18T10:00:00Z'))).toBe(true); // Wed 11:00 Berlin
    expect(isOpen(berlin, new Date('2026-11-18T16:30:00Z'))).toBe(false); // Wed 17:30 Berlin
    expect(isOpen(berlin, new Date('2026-11-21T10:00:00Z'))).toBe(false); // Saturday
  });

  it('follows daylight saving time', () => {
    expect(isOpen(berlin, new Date('2026-07-15T07:30:00Z'))).toBe(true); // 09:30 CEST
    expect(isOpen(berlin, new Date('2026-01-14T07:30:00Z'))).toBe(false); // 08:30 CET
  });

  it('gives one closed period from Friday close to Monday open', () => {
    const friNight = closedPeriodStart(berlin, new Date('2026-11-20T20:00:00Z'));
    const sunday = closedPeriodStart(berlin, new Date('2026-11-22T12:00:00Z'));
    expect(friNight?.toISOString()).toBe('2026-11-20T16:00:00.000Z'); // Fri 17:00 Berlin
    expect(sunday?.getTime()).toBe(friNight?.getTime());
    expect(closedPeriodStart(berlin, new Date('2026-11-18T10:00:00Z'))).toBeNull();
  });

  it('accepts several ranges and a bare zone name', () => {
    const h = parseBusinessHours('Mon-Fri 09:00-17:00; Sat 10:00-14:00 UTC');
    expect(isOpen(h, new Date('2026-11-21T11:00:00Z'))).toBe(true);
    expect(h.timeZone).toBe('UTC');
  });

  it.each(['', 'Mon-Fri', 'Mon-Fri 17:00-09:00 UTC', 'Funday 09:00-17:00 UTC', 'Mon-Fri 09:00-17:00 Mars/Olympus'])(
    'rejects %j with a clear message',
    (text) => {
      expect(() => parseBusinessHours(text)).toThrow(BusinessHoursError);
    },
  );
});
