import { z } from 'zod';
import { MONEY } from '../spec/index.js';

/**
 * Money: requests carry JSON numbers, responses two-decimal strings (spec:
 * General conventions). The sandbox stores integer cents in between.
 */

/** A request number as written: the shortest decimal that reads back as the same double (no exponent below 1e21). */
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * A money field of a request: 0 or more and at most {@link MONEY}.max, so that
 * its cents are exact; beyond that it is a 422 naming the field, never a
 * rounded or garbled amount.
 */
export const Amount = z.number().min(0, 'must be at least 0').max(MONEY.max, `may not be more than ${MONEY.maxText}`);

/**
 * A checked request amount -> cents, worked on its decimal digits, never by
 * multiplying a float: `1234567.89` is 123456789 cents. A finer amount is
 * rounded to the cent, half away from zero, as written (`1.005` -> 1.01,
 * `0.1 + 0.2` -> 0.30); one under 1e-6 (written with an exponent) is 0.
 */
export function toCents(amount: number): number {
  const m = DECIMAL.exec(String(Math.abs(amount)));
  if (!m) return 0;
  const fraction = (m[2] ?? '').padEnd(3, '0');
  const cents = Number(m[1]) * 100 + Number(fraction.slice(0, 2)) + (Number(fraction[2]) >= 5 ? 1 : 0);
  return amount < 0 ? -cents : cents;
}

/** Cents -> `"12.50"`. */
export function money(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
