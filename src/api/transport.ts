import type { z } from 'zod';
import { isLoopbackHost } from '../util/index.js';
import { describeMismatch, malformedRecords } from './mismatch.js';
import { HEADERS } from '../spec/index.js';
import {
  ApiError,
  NetworkError,
  NotFoundError,
  OutcomeUnknownError,
  QuotaExhaustedError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  errorFromResponse,
  parseResetHeader,
} from './errors.js';
import type { IdempotencyKeyGenerator } from './idempotency-key.js';
import type { LimiterPriority, Permit, RateLimiter } from './rate-limiter.js';
import { apiPromise, rateLimitInfo, type ApiPromise, type ApiResponse } from './response.js';
import { backoffMs, mayRetry, type ApiRetryOptions } from './retry.js';

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

/**
 * Validates the base URL: https is required (the service refuses plain HTTP with
 * 403, and the token must not travel in clear) except on loopback hosts, where
 * the sandbox runs. Returns the URL without a trailing slash.
 */
export function checkBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`createApiClient: baseUrl is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new TypeError(`createApiClient: baseUrl must use https (plain http only for loopback hosts), got ${url.protocol}//${url.host}`);
  }
  if (url.search || url.username || url.password) {
    throw new TypeError(
      'createApiClient: baseUrl must not carry a query string or credentials (the token goes in the Authorization header)',
    );
  }
  return url.toString().replace(/\/+$/, '');
}

function buildUrl(base: string, path: string, query: Record<string, QueryValue> | undefined): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) qs.append(k, String(v));
  const s = qs.toString();
  return `${base}${path}${s ? `?${s}` : ''}`;
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function createTransport(o: TransportOptions): Transport {
  const base = checkBaseUrl(o.baseUrl);

  async function attempt<T>(spec: RequestSpec<T>, key: string | undefined, n: number, permit: Permit | undefined): Promise<ApiResponse<T>> {
    const url = buildUrl(base, spec.path, spec.query);
    const headers: Record<string, string> = {
      authorization: `Bearer ${o.token}`,
      accept: 'application/json',
    };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    if (key !== undefined) headers[HEADERS.idempotencyKey] = key;

    const callerSignal = spec.options?.signal;
    if (callerSignal?.aborted) {
      await permit?.done();
      throw callerSignal.reason;
    }
    const timeoutMs = spec.options?.timeoutMs ?? o.timeoutMs;
    const ctrl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctrl.abort();
    }, timeoutMs);
    const onCallerAbort = (): void => ctrl.abort(callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });

    let res: Response;
    let json: unknown;
    try {
      const init: RequestInit = { method: spec.method, headers, signal: ctrl.signal };
      if (spec.body !== undefined) init.body = JSON.stringify(spec.body);
      res = await o.fetch(url, init);
      json = await readJson(res);
    } catch (err) {
      if (timedOut) throw new TimeoutError({ op: spec.op, message: `${spec.op}: no answer within ${timeoutMs} ms`, cause: err });
      if (callerSignal?.aborted) throw callerSignal.reason;
      // The cause is kept for debugging; its message comes from fetch and never contains headers.
      throw new NetworkError({
        op: spec.op,
        message: `${spec.op}: request failed (${(err as Error)?.message ?? 'network error'})`,
        cause: err,
      });
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
      // Limiter bookkeeping must never turn an answered call into a failure.
      await permit?.done().catch((e: unknown) => o.logger?.debug({ op: spec.op, err: String(e) }, 'rate limiter bookkeeping failed'));
    }

    const info = rateLimitInfo(res.headers, parseResetHeader);
    if (o.limiter && permit) {
      await o.limiter
        .observe({ ...info, acquiredAtMs: permit.acquiredAtMs })
        .catch((e: unknown) => o.logger?.debug({ op: spec.op, err: String(e) }, 'rate limiter bookkeeping failed'));
    }
    const replayed = res.headers.get(HEADERS.idempotentReplay) === 'true';
    const meta = {
      status: res.status,
      replayed,
      idempotencyKey: key,
      requestId: res.headers.get('x-request-id') ?? undefined,
      rateLimit: info,
      attempts: n,
      headers: res.headers,
    };

    if (res.status >= 200 && res.status < 300) {
      if (key !== undefined && o.memo) o.memo.set(key, { json, status: res.status, requestId: meta.requestId });
      if (!spec.schema) return { ...meta, data: undefined as T };
      const parsed = spec.schema.safeParse(json);
      if (!parsed.success) {
        const records = malformedRecords(json, parsed.error.issues);
        const where = describeMismatch(json, parsed.error.issues, records);
        throw new UnexpectedResponseError({
          status: res.status,
          op: spec.op,
          message: `${spec.op}: answer does not match the spec (${where})`,
          body: json,
          records,
        });
      }
      return { ...meta, data: parsed.data };
    }
    throw errorFromResponse({
      status: res.status,
      headers: res.headers,
      body: json,
      hadIdempotencyKey: key !== undefined,
      op: spec.op,
      nowMs: o.now(),
    });
  }

  async function run<T>(spec: RequestSpec<T>): Promise<ApiResponse<T>> {
    // One key per logical call, generated before the first attempt and re-sent on
    // every retry: that is what makes retrying a write safe.
    const key =
      spec.repeat === 'ik'
        ? (spec.options?.idempotencyKey ?? o.idempotencyKey({ op: spec.op, method: spec.method, path: spec.path }))
        : undefined;
    const safe = spec.repeat !== 'unsafe';
    if (key === undefined && spec.options?.idempotencyKey !== undefined) {
      // The endpoint takes no Idempotency-Key: a caller's key cannot make a repeat safe, so it is not sent.
      o.logger?.warn(
        { op: spec.op },
        `${spec.op}: idempotencyKey ignored; the endpoint takes no Idempotency-Key, so the call is sent once and never repeated`,
      );
    }
    const remembered = key !== undefined ? o.memo?.get(key) : undefined;
    if (remembered) {
      const parsed = spec.schema ? spec.schema.safeParse(remembered.json) : undefined;
      if (!parsed || parsed.success) {
        o.logger?.debug({ op: spec.op }, 'workspace api write already made by this run; its response is used');
        return {
          data: (parsed ? parsed.data : undefined) as T,
          status: remembered.status,
          replayed: true,
          idempotencyKey: key,
          requestId: remembered.requestId,
          rateLimit: rateLimitInfo(new Headers(), parseResetHeader),
          attempts: 0,
          headers: new Headers(),
        };
      }
    }
    for (let n = 1; ; n++) {
      let permit: Permit | undefined;
      try {
        permit = o.limiter ? await o.limiter.acquire(spec.options?.signal, o.priority) : undefined;
      } catch (err) {
        // Refused locally (monthly quota known to be spent): reported like an attempt, nothing sent.
        if (err instanceof ApiError) {
          o.onCall?.({
            op: spec.op,
            method: spec.method,
            path: spec.path,
            idempotencyKey: key,
            body: spec.body,
            attempt: n,
            status: 0,
            durationMs: 0,
            rateLimitWaitMs: 0,
            priority: o.priority,
            replayed: false,
            rateLimitRemaining: undefined,
            quotaRemaining: err instanceof QuotaExhaustedError ? 0 : undefined,
            error: err,
            willRetry: false,
          });
        }
        throw err;
      }
      const started = o.now();
      try {
        const r = await attempt(spec, key, n, permit);
        o.onCall?.({
          op: spec.op,
          method: spec.method,
          path: spec.path,
          idempotencyKey: key,
          body: spec.body,
          attempt: n,
          status: r.status,
          durationMs: o.now() - started,
          rateLimitWaitMs: permit?.waitedMs ?? 0,
          priority: o.priority,
          replayed: r.replayed,
          rateLimitRemaining: r.rateLimit.remaining,
          quotaRemaining: r.rateLimit.quotaRemaining,
          error: undefined,
          willRetry: false,
        });
        o.logger?.debug({ op: spec.op, status: r.status, attempt: n, replayed: r.replayed, ms: o.now() - started }, 'workspace api call');
        return r;
      } catch (caught) {
        if (!(caught instanceof ApiError)) throw caught;
        // A DELETE retried after a lost answer finds the record gone: the first attempt did the work.
        if (caught instanceof NotFoundError && spec.method === 'DELETE' && n > 1) {
          return {
            data: undefined as T,
            status: 204,
            replayed: false,
            idempotencyKey: undefined,
            requestId: caught.requestId,
            rateLimit: rateLimitInfo(new Headers(), parseResetHeader),
            attempts: n,
            headers: new Headers(),
          };
        }
        const err = !safe && mayHaveBeenApplied(caught) ? new OutcomeUnknownError(caught) : caught;
        if (err instanceof RateLimitedError) await o.limiter?.pause(err.retryAfterMs);
        if (err instanceof QuotaExhaustedError) await o.limiter?.exhaustQuota(err.resetAt);
        let delay: number | undefined;
        if (n < o.retry.maxAttempts && mayRetry(err, safe)) {
          delay = backoffMs(n, err, o.retry, o.random);
        }
        o.onCall?.({
          op: spec.op,
          method: spec.method,
          path: spec.path,
          idempotencyKey: key,
          body: spec.body,
          attempt: n,
          status: err.status,
          durationMs: o.now() - started,
          rateLimitWaitMs: permit?.waitedMs ?? 0,
          priority: o.priority,
          replayed: false,
          rateLimitRemaining: undefined,
          quotaRemaining: undefined,
          error: err,
          willRetry: delay !== undefined,
        });
        o.logger?.[delay === undefined ? 'warn' : 'debug'](
          { op: spec.op, status: err.status, code: err.code, attempt: n, retryInMs: delay },
          'workspace api call failed',
        );
        if (delay === undefined) throw err;
        await o.sleep(delay, spec.options?.signal);
      }
    }
  }

  return { request: (spec) => apiPromise(run(spec)) };
}

/** Whether a failed attempt may have been carried out by the service (it was sent, and no refusal came back). */
function mayHaveBeenApplied(err: ApiError): boolean {
  if (err instanceof TimeoutError || err instanceof ServerError) return true;
  if (err instanceof NetworkError) {
    const code = (err.cause as { cause?: { code?: string } } | undefined)?.cause?.code ?? '';
    return code !== 'ECONNREFUSED' && code !== 'ENOTFOUND' && code !== 'EAI_AGAIN';
  }
  return false;
}
