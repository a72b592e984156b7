/** Epoch milliseconds source; injected so tests control time. */
export type Clock = () => number;

/**
 * The sandbox's adjustable clock: a base clock plus an offset moved by the
 * `/_sandbox/clock` hook, so token expiry, idempotency memory, rate windows and
 * `snoozed_until` checks can be exercised without waiting.
 */
export class SandboxClock {
  private offset = 0;
  constructor(private readonly base: Clock = Date.now) {}

  now(): number {
    return this.base() + this.offset;
  }

  /** Moves time forward (or back, with a negative value). */
  advance(ms: number): void {
    this.offset += ms;
  }

  /** How far the hooks have moved time from the base clock (kept by `--keep-sandbox`). */
  get offsetMs(): number {
    return this.offset;
  }

  set offsetMs(ms: number) {
    this.offset = ms;
  }

  /** Jumps to an absolute instant. */
  set(epochMs: number): void {
    this.offset = epochMs - this.base();
  }
}

/** ISO 8601 with an explicit offset (spec: timestamps carry an offset). */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Nullable variant of {@link iso}. */
export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}
