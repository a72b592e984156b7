import { isLoopbackHost } from '../util/index.js';
import {
  ApiError,
  NetworkError,
  NotFoundError,
  OutcomeUnknownError,
  QuotaExhaustedError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  parseResetHeader,
} from './errors.js';
import type { Permit } from './rate-limiter.js';
import { apiPromise, rateLimitInfo, type ApiResponse } from './response.js';
import { backoffMs, mayRetry } from './retry.js';
import { attempt, type Attempt, type TransportState } from './attempt.js';
import type { CallEvent, RequestSpec, Transport, TransportOptions } from './transport-types.js';

export type {
  ApiLogger,
  CallEvent,
  HttpMethod,
  QueryValue,
  Repeatability,
  RequestOptions,
  RequestSpec,
  Transport,
  TransportOptions,
  WriteMemo,
  WriteOptions,
} from './transport-types.js';

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

export function createTransport(o: TransportOptions): Transport {
  const state: TransportState = { ...o, base: checkBaseUrl(o.baseUrl) };
  return { request: (spec) => apiPromise(run(state, spec)) };
}

/** A call: its attempts, each reported to `onCall`, repeated as the retry policy allows. */
async function run<T>(o: TransportState, spec: RequestSpec<T>): Promise<ApiResponse<T>> {
  const key = idempotencyKeyFor(o, spec);
  const remembered = key !== undefined ? rememberedWrite(o, spec, key) : undefined;
  if (remembered) return remembered;
  for (let n = 1; ; n++) {
    const a: Attempt<T> = { spec, key, n, permit: await acquirePermit(o, spec, key, n) };
    const started = o.now();
    try {
      const r = await attempt(o, a);
      reportAnswer(o, a, r, started);
      return r;
    } catch (caught) {
      if (!(caught instanceof ApiError)) throw caught;
      const done = deleteAlreadyDone<T>(a, caught);
      if (done) return done;
      await o.sleep(await retryDelay(o, a, caught, started), spec.options?.signal);
    }
  }
}

/**
 * The call's Idempotency-Key: one per logical call, generated before the first attempt
 * and re-sent on every retry (that is what makes retrying a write safe). Undefined for
 * endpoints that take none, where a caller's key is ignored with a warning.
 */
function idempotencyKeyFor(o: TransportState, spec: RequestSpec<unknown>): string | undefined {
  const key =
    spec.repeat === 'ik'
      ? (spec.options?.idempotencyKey ?? o.idempotencyKey({ op: spec.op, method: spec.method, path: spec.path }))
      : undefined;
  if (key === undefined && spec.options?.idempotencyKey !== undefined) {
    // The endpoint takes no Idempotency-Key: a caller's key cannot make a repeat safe, so it is not sent.
    o.logger?.warn(
      { op: spec.op },
      `${spec.op}: idempotencyKey ignored; the endpoint takes no Idempotency-Key, so the call is sent once and never repeated`,
    );
  }
  return key;
}

/** The run's memo of this key's write as a replayed response (nothing sent), if it has one that still parses. */
function rememberedWrite<T>(o: TransportState, spec: RequestSpec<T>, key: string): ApiResponse<T> | undefined {
  const remembered = o.memo?.get(key);
  if (!remembered) return undefined;
  const parsed = spec.schema ? spec.schema.safeParse(remembered.json) : undefined;
  if (parsed && !parsed.success) return undefined;
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

/** The `onCall` event of attempt `n`, with what its outcome adds. */
function callEvent(
  o: TransportState,
  spec: RequestSpec<unknown>,
  key: string | undefined,
  n: number,
  outcome: Omit<CallEvent, 'op' | 'method' | 'path' | 'idempotencyKey' | 'body' | 'attempt' | 'priority'>,
): CallEvent {
  return {
    op: spec.op,
    method: spec.method,
    path: spec.path,
    idempotencyKey: key,
    body: spec.body,
    attempt: n,
    priority: o.priority,
    ...outcome,
  };
}

/**
 * The limiter's permit for attempt `n` (none without a limiter). A local refusal (the
 * monthly quota known to be spent) is reported like an attempt, with nothing sent.
 */
async function acquirePermit(
  o: TransportState,
  spec: RequestSpec<unknown>,
  key: string | undefined,
  n: number,
): Promise<Permit | undefined> {
  try {
    return o.limiter ? await o.limiter.acquire(spec.options?.signal, o.priority) : undefined;
  } catch (err) {
    if (err instanceof ApiError) {
      o.onCall?.(
        callEvent(o, spec, key, n, {
          status: 0,
          durationMs: 0,
          rateLimitWaitMs: 0,
          replayed: false,
          rateLimitRemaining: undefined,
          quotaRemaining: err instanceof QuotaExhaustedError ? 0 : undefined,
          error: err,
          willRetry: false,
        }),
      );
    }
    throw err;
  }
}

function reportAnswer<T>(o: TransportState, { spec, key, n, permit }: Attempt<T>, r: ApiResponse<T>, started: number): void {
  o.onCall?.(
    callEvent(o, spec, key, n, {
      status: r.status,
      durationMs: o.now() - started,
      rateLimitWaitMs: permit?.waitedMs ?? 0,
      replayed: r.replayed,
      rateLimitRemaining: r.rateLimit.remaining,
      quotaRemaining: r.rateLimit.quotaRemaining,
      error: undefined,
      willRetry: false,
    }),
  );
  o.logger?.debug({ op: spec.op, status: r.status, attempt: n, replayed: r.replayed, ms: o.now() - started }, 'workspace api call');
}

/** A DELETE retried after a lost answer finds the record gone: the first attempt did the work. */
function deleteAlreadyDone<T>({ spec, n }: Attempt<T>, caught: ApiError): ApiResponse<T> | undefined {
  if (!(caught instanceof NotFoundError && spec.method === 'DELETE' && n > 1)) return undefined;
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

/**
 * After a failed attempt: tells the limiter of a 429 or a spent quota, reports the
 * attempt, and returns the delay before the next one; throws the error when none follows
 * (an unsafe call that may have been carried out fails with OutcomeUnknownError).
 */
async function retryDelay<T>(o: TransportState, a: Attempt<T>, caught: ApiError, started: number): Promise<number> {
  const { spec, key, n, permit } = a;
  const safe = spec.repeat !== 'unsafe';
  const err = !safe && mayHaveBeenApplied(caught) ? new OutcomeUnknownError(caught) : caught;
  if (err instanceof RateLimitedError) await o.limiter?.pause(err.retryAfterMs);
  if (err instanceof QuotaExhaustedError) await o.limiter?.exhaustQuota(err.resetAt);
  let delay: number | undefined;
  if (n < o.retry.maxAttempts && mayRetry(err, safe)) {
    delay = backoffMs(n, err, o.retry, o.random);
  }
  o.onCall?.(
    callEvent(o, spec, key, n, {
      status: err.status,
      durationMs: o.now() - started,
      rateLimitWaitMs: permit?.waitedMs ?? 0,
      replayed: false,
      rateLimitRemaining: undefined,
      quotaRemaining: undefined,
      error: err,
      willRetry: delay !== undefined,
    }),
  );
  o.logger?.[delay === undefined ? 'warn' : 'debug'](
    { op: spec.op, status: err.status, code: err.code, attempt: n, retryInMs: delay },
    'workspace api call failed',
  );
  if (delay === undefined) throw err;
  return delay;
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
