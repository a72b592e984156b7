import type { z } from 'zod';
import type { IdempotencyKeyGenerator } from './idempotency-key.js';
import type { LimiterPriority, RateLimiter } from './rate-limiter.js';
import type { ApiPromise } from './response.js';
import type { ApiError } from './errors.js';
import type { ApiRetryOptions } from './retry.js';

// The shapes of the transport (src/api/transport.ts), which re-exports them: the request
// a resource module describes, the options, and what each attempt reports.

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | null | undefined;

/** Options accepted by every method (last argument). */
export interface RequestOptions {
  /** Aborts the call (not retried). */
  signal?: AbortSignal;
  /** Overrides the client's per-request timeout. */
  timeoutMs?: number;
}

/** Options accepted by every write that takes an Idempotency-Key. */
export interface WriteOptions extends RequestOptions {
  /**
   * Idempotency-Key to send. Reuse it to make a repeated call a replay; without
   * it the client's generator makes one (kept across this call's retries).
   */
  idempotencyKey?: string;
}

/**
 * How a request may be repeated: `ik` writes carry an Idempotency-Key (always),
 * `safe` requests cannot do harm twice (GET, PUT, DELETE, search), `unsafe`
 * ones are never retried.
 */
export type Repeatability = 'ik' | 'safe' | 'unsafe';

/** One request as the resource modules describe it. */
export interface RequestSpec<T> {
  /** Operation name (`contacts.create`) for errors, logs and hooks. */
  op: string;
  method: HttpMethod;
  /** Path below the base URL, segments already encoded. */
  path: string;
  query?: Record<string, QueryValue> | undefined;
  body?: unknown;
  /** Schema of the whole JSON answer; omitted for 204 answers. */
  schema?: z.ZodType<T> | undefined;
  repeat: Repeatability;
  options?: WriteOptions | undefined;
}

/** One attempt, reported to `onCall` (for metrics: waits, 429s, quota). */
export interface CallEvent {
  op: string;
  method: HttpMethod;
  /** Path below the base URL, without the query string (e.g. `/contacts/36/labels`). */
  path: string;
  /** The Idempotency-Key sent, the same on every attempt of one call; undefined when none was. */
  idempotencyKey: string | undefined;
  /** The request body before JSON encoding; undefined without one. For tests (switchyard/testing); never logged. */
  body: unknown;
  attempt: number;
  /** HTTP status; 0 when there was no answer. */
  status: number;
  durationMs: number;
  /** Time spent waiting for the rate limiter before this attempt. */
  rateLimitWaitMs: number;
  /** The priority the client asked the rate limiter for (`ApiClientOptions.priority`). */
  priority: LimiterPriority;
  replayed: boolean;
  rateLimitRemaining: number | undefined;
  quotaRemaining: number | undefined;
  error: ApiError | undefined;
  /** Whether another attempt follows. */
  willRetry: boolean;
}

/** Minimal structured logger (a pino logger fits). Only op names, statuses and timings are logged. */
export interface ApiLogger {
  debug(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

/**
 * A memory of writes by Idempotency-Key, consulted before a keyed write is sent: a remembered
 * write is answered from it (`replayed`, no request). The worker gives one per run, so a run
 * replayed after a sleep or wait does not write again even past the API's 24-hour key memory.
 */
export interface WriteMemo {
  get(key: string): { readonly json: unknown; readonly status: number; readonly requestId: string | undefined } | undefined;
  set(key: string, write: { readonly json: unknown; readonly status: number; readonly requestId: string | undefined }): void;
}

export interface TransportOptions {
  baseUrl: string;
  token: string;
  fetch: typeof globalThis.fetch;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  timeoutMs: number;
  retry: ApiRetryOptions;
  limiter: RateLimiter | undefined;
  /** Priority of every `limiter.acquire`. */
  priority: LimiterPriority;
  idempotencyKey: IdempotencyKeyGenerator;
  logger: ApiLogger | undefined;
  onCall: ((e: CallEvent) => void) | undefined;
  random: () => number;
  /** Remembered writes by Idempotency-Key (see {@link WriteMemo}). */
  memo?: WriteMemo | undefined;
}

/** Sends requests: auth, JSON, timeout, rate limiter, error mapping, retries. */
export interface Transport {
  request<T>(spec: RequestSpec<T>): ApiPromise<T>;
}
