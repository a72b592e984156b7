import { globToRegExp } from './request-log.js';

/** A fault rule of `POST /_sandbox/faults`. */
export interface FaultRule {
  id: number;
  /** Glob over the path below /api/v1, e.g. `/contacts*`; default `*`. */
  path: string;
  /** Upper-case method; null for every method. */
  method: string | null;
  /** Share of matching calls answered with a plain 500 (0..1). */
  error_rate: number;
  /** Delay added before the call is handled. */
  latency_ms: number;
  /** Answer 429 with Retry-After instead of handling the call. */
  force_429: boolean;
  /** Answer 401 `token_expired` whatever the token. */
  token_expired: boolean;
  /**
   * Answer 402 `plan_limit`: a plan allowance is spent. The spec's only 402 is
   * the campaign broadcast limit, and campaigns are not in the API, so no route
   * can reach it on its own; this lets clients see the answer.
   */
  plan_limit: boolean;
  /** How many more calls the rule applies to; null for no end. */
  remaining: number | null;
}

/** The combined effect of every rule matching a call. */
export interface FaultEffect {
  latencyMs: number;
  fail500: boolean;
  force429: boolean;
  tokenExpired: boolean;
  planLimit: boolean;
}

/** Fault injection rules; `random` is injected so error shares are testable. */
export class FaultInjector {
  private rules: FaultRule[] = [];
  private seq = 0;
  constructor(private readonly random: () => number = Math.random) {}

  add(rule: Omit<FaultRule, 'id'>): FaultRule {
    const stored = { ...rule, id: ++this.seq };
    this.rules.push(stored);
    return stored;
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  remove(id: number): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    return this.rules.length < before;
  }

  clear(): void {
    this.rules = [];
  }

  /** Effect for one call; consumes one use of every matching rule with a count. */
  evaluate(method: string, path: string): FaultEffect {
    const effect: FaultEffect = { latencyMs: 0, fail500: false, force429: false, tokenExpired: false, planLimit: false };
    for (const rule of this.rules) {
      if (rule.method && rule.method !== method) continue;
      if (!globToRegExp(rule.path).test(path)) continue;
      if (rule.remaining !== null) {
        if (rule.remaining <= 0) continue;
        rule.remaining -= 1;
      }
      effect.latencyMs += rule.latency_ms;
      effect.force429 ||= rule.force_429;
      effect.tokenExpired ||= rule.token_expired;
      effect.planLimit ||= rule.plan_limit;
      effect.fail500 ||= rule.error_rate > 0 && this.random() < rule.error_rate;
    }
    return effect;
  }
}
