// Shared by the bench scripts and the tests (test/ imports it from here).

/** Largest number of timestamps inside any half-open window [t, t + windowMs): a sliding-window count. */
export function maxInWindow(times: readonly number[], windowMs = 10_000): number {
  const t = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while ((t[i] as number) - (t[j] as number) >= windowMs) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}
