/** Retry schedule of event deliveries (spec, Events 4 and 6: automatic back-off, schedule not shown). */
export interface RetryPolicy {
  /** Delay before the second attempt; doubles on each further attempt. */
  baseMs: number;
  /** Ceiling of a single delay. */
  maxMs: number;
  /** Attempts in total, the first included; then the delivery is marked failed. */
  maxAttempts: number;
  /** Time allowed for one attempt before it counts as failed. */
  timeoutMs: number;
}

/** The sandbox's webhook redelivery, defaults for the CLI: 1 s, 2 s, 4 s … capped at 30 s, 8 attempts. Tests inject shorter ones. */
export const DEFAULT_WEBHOOK_RETRY: RetryPolicy = { baseMs: 1000, maxMs: 30_000, maxAttempts: 8, timeoutMs: 10_000 };

/** Delay after the `attempt`-th failed attempt (1-based): base · 2^(attempt-1), capped. */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
}

/** Only a 2xx answer counts as delivered (the receiver answers 202 accepted or 200 duplicate). */
export function isDelivered(status: number): boolean {
  return status >= 200 && status < 300;
}
