import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/command.js';
import { timeFlag } from '../../../src/cli/flags.js';
import { dateProblem } from '../../../src/api/dates.js';
import { parseDateOrTimestamp } from '../../../src/util/dates.js';
import { parseSince } from '../../../src/util/units.js';

// `--since`/`--until` read dates as strictly as the API client does (one parser, src/util/dates.ts):
// Date.parse rolled 2026-02-30 over to 2 March and read a time without an offset as local time.
const now = Date.parse('2026-12-15T12:00:00Z');

/** The UsageError message timeFlag throws for `value`, or null when it accepts it. */
function refusal(value: string): string | null {
  try {
    timeFlag('since', value, now);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
}

describe('--since and --until', () => {
  it.each([
    ['2026-02-30', 'February 2026 has 28 days'],
    ['2026-11-31', 'November 2026 has 30 days'],
    ['2025-02-29', 'February 2025 has 28 days'],
    ['2026-13-01', 'there is no month 13'],
    ['2026-02-30T10:00:00Z', 'February 2026 has 28 days'],
  ])('refuses the day that does not exist %s, saying why', (value, why) => {
    const message = refusal(value);
    expect(message).toContain(`--since: "${value}" does not exist: ${why}`);
    expect(message).toContain('expected an age such as 30m');
  });

  it('refuses a time of day without an offset (it would be read as local time)', () => {
    expect(refusal('2026-03-04T10:00:00')).toContain('"2026-03-04T10:00:00" has no offset');
    expect(refusal('2026-11-27T10:00Z')).toContain(
      '"2026-11-27T10:00Z" is not written YYYY-MM-DDThh:mm:ss with Z or ±hh:mm (seconds included)',
    );
    expect(refusal('2026-03-04 10:00')).toContain('"2026-03-04 10:00" is not written YYYY-MM-DD');
  });

  it('refuses text that is neither an age nor a date', () => {
    expect(refusal('yesterday')).toContain('"yesterday" is neither an age nor a date');
    expect(refusal('2026-03-04junk')).toContain('is not written YYYY-MM-DD');
  });

  it('takes ages, dates (UTC midnight) and timestamps with an offset', () => {
    expect(timeFlag('since', '2h', now)).toBe(now - 7_200_000);
    expect(timeFlag('since', '2024-02-29', now)).toBe(Date.UTC(2024, 1, 29));
    expect(timeFlag('since', '2026-03-04T10:00:00Z', now)).toBe(Date.UTC(2026, 2, 4, 10));
    expect(timeFlag('since', '2026-03-04T10:00:00+01:00', now)).toBe(Date.UTC(2026, 2, 4, 9));
    expect(timeFlag('since', '2026-03-04T10:00:00.250-02:30', now)).toBe(Date.UTC(2026, 2, 4, 12, 30, 0, 250));
    expect(parseSince('2026-11-31', now)).toBeNull();
  });

  it("is the same reading as the API client's", () => {
    for (const value of ['2026-02-30', '2026-11-31', '2024-02-29', '2026-04-31']) {
      const cli = refusal(value);
      const client = dateProblem(value);
      expect(cli === null).toBe(client === null);
      if (client) expect(cli).toContain(client);
    }
    expect(parseDateOrTimestamp('2026-03-04')).toEqual({ ms: Date.UTC(2026, 2, 4) });
  });
});
