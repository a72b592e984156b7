/**
 * Money: requests carry JSON numbers, responses two-decimal strings (spec:
 * General conventions). The sandbox stores integer cents in between.
 */

/** Request number -> cents, rounded half away from zero. */
export function toCents(amount: number): number {
  return Math.sign(amount) * Math.round(Math.abs(amount) * 100);
}

/** Cents -> `"12.50"`. */
export function money(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
