import { IDEMPOTENCY_MEMORY_MS } from '../spec/index.js';

/** A remembered first answer, replayed byte for byte. */
export interface StoredAnswer {
  status: number;
  body: string;
  contentType: string | null;
}

export type Entry =
  { state: 'in_flight'; fingerprint: string; at: number } | { state: 'done'; fingerprint: string; at: number; answer: StoredAnswer };

/** Outcome of presenting a key: do the work, replay, or refuse. */
export type IdempotencyDecision =
  { kind: 'proceed' } | { kind: 'replay'; answer: StoredAnswer } | { kind: 'in_flight' } | { kind: 'mismatch' };

/**
 * Idempotency-Key memory (spec: Limits, Errors). Keys are scoped by the caller
 * (the workspace id), expire after 24 h of the injected clock, a key still in
 * flight answers 409, a key with a different request answers 422, and a
 * failed request is forgotten so the key can be reused after fixing the body.
 */
export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  constructor(private readonly ttlMs = IDEMPOTENCY_MEMORY_MS) {}

  /** Presents a key; on `proceed` the key is marked in flight until {@link complete} or {@link forget}. */
  begin(scope: string, key: string, fingerprint: string, now: number): IdempotencyDecision {
    const id = `${scope}\u0000${key}`;
    const entry = this.entries.get(id);
    if (entry && now - entry.at >= this.ttlMs) this.entries.delete(id);
    const live = this.entries.get(id);
    if (!live) {
      this.entries.set(id, { state: 'in_flight', fingerprint, at: now });
      return { kind: 'proceed' };
    }
    if (live.state === 'in_flight') return { kind: 'in_flight' };
    if (live.fingerprint !== fingerprint) return { kind: 'mismatch' };
    return { kind: 'replay', answer: live.answer };
  }

  /** Remembers a successful (2xx) first answer; memory runs from now. */
  complete(scope: string, key: string, fingerprint: string, answer: StoredAnswer, now: number): void {
    this.entries.set(`${scope}\u0000${key}`, { state: 'done', fingerprint, at: now, answer });
  }

  /** Drops a key whose request failed (spec: a failed request is not recorded). */
  forget(scope: string, key: string): void {
    this.entries.delete(`${scope}\u0000${key}`);
  }

  clear(): void {
    this.entries.clear();
  }

  /** The finished keys (a key in flight has no answer to keep), for saving. */
  finished(): [string, Entry][] {
    return [...this.entries].filter(([, e]) => e.state === 'done');
  }

  /** Puts saved keys back. */
  restore(entries: readonly [string, Entry][]): void {
    this.entries.clear();
    for (const [id, entry] of entries) this.entries.set(id, entry);
  }
}

/** Key order and whitespace do not make a different body; anything else does. */
export function canonicalBody(raw: string): string {
  if (raw.trim() === '') return '';
  try {
    return stable(JSON.parse(raw) as unknown);
  } catch {
    return raw;
  }
}

function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
