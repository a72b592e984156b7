/**
 * Error classes of the Workspace API client. Behaviour is chosen by
 * `instanceof` (or the stable `code`), never by message text. HTTP answers are
 * mapped to classes in exactly one place: {@link errorFromResponse}.
 *
 * No message ever contains the token: messages are built from the status, the
 * service's own `message` field and the operation name, never from headers.
 */

import { HEADERS, BURST_WINDOW_MS } from '../spec/index.js';
import type { MalformedRecord } from './mismatch.js';

/** Details shared by every error that came from (or instead of) an HTTP answer. */
export interface ApiErrorInit {
  /** HTTP status; 0 when there was no answer (network, timeout, client-side check). */
  status: number;
  /** Stable machine code: the service's `code` when it sent one, else a class default. */
  code: string;
  message: string;
  retryable: boolean;
  requestId?: string | undefined;
  /** Operation that failed, e.g. `contacts.create`. */
  op?: string | undefined;
  /** Parsed JSON body of the answer, when there was one. */
  body?: unknown;
  /** `Retry-After` of the answer, in ms, when it sent one. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

/** Base of every error thrown by the client. */
export class ApiError extends Error {
  override readonly name: string = 'ApiError';
  /** HTTP status; 0 when no HTTP answer was received. */
  readonly status: number;
  /** Stable machine-readable code. */
  readonly code: string;
  /** Whether repeating the same request (same Idempotency-Key) later may succeed. */
  readonly retryable: boolean;
  /** The service's request id header, when present. */
  readonly requestId: string | undefined;
  readonly op: string | undefined;
  /** Parsed JSON error body (`{message, errors?, code?}`), when present. */
  readonly body: unknown;
  /** The answer's `Retry-After` in ms (honoured by the retry loop), when present. */
  readonly retryAfterMs: number | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.retryable;
    this.requestId = init.requestId;
    this.op = init.op;
    this.body = init.body;
    this.retryAfterMs = init.retryAfterMs;
  }
}

type Init = Omit<ApiErrorInit, 'retryable' | 'code'> & { code?: string };

/** 400: malformed request; repeating it unchanged does not help. */
export class BadRequestError extends ApiError {
  override readonly name = 'BadRequestError';
  constructor(i: Init) {
    super({ ...i, code: i.code ?? 'bad_request', retryable: false });
  }
}
/** 401: missing or revoked token. */
export class UnauthorizedError extends ApiError {
  override readonly name: string = 'UnauthorizedError';
  constructor(i: Init) {
    super({ ...i, code: i.code ?? 'unauthorized', retryable: false });
  }
}
/** 401 `code: token_expired`: the token exists but is past its date; replace it. */
export class TokenExpiredError extends UnauthorizedError {
  override readonly name = 'TokenExpiredError';
  constructor(i: Init) {
    super({ ...i, code: 'token_expired' });
  }
}
/** 403: ability, permission, allowlist or plain-HTTP refusal. */
export class ForbiddenError extends ApiError {
  override readonly name: string = 'ForbiddenError';
  constructor(i: Init) {
    super({ ...i, code: i.code ?? 'forbidden', retryable: false });
  }
}
/** 403 `code: legacy_key_retired`: a full-access key past its retirement date. */
export class LegacyKeyRetiredError extends ForbiddenError {
  override readonly name = 'LegacyKeyRetiredError';
  constructor(i: Init) {
    super({ ...i, code: 'legacy_key_retired' });
  }
}
/** 404: no such record in this workspace (another workspace's record answers the same). */
export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError';
  constructor(i: Init) {
    super({ ...i, code: i.code ?? 'not_found', retryable: false });
  }
}
/** 402: a plan allowance is spent. */
export class PlanLimitError extends ApiError {
  override readonly name = 'PlanLimitError';
  constructor(i: Init) {
    super({ ...i, code: i.code ?? 'plan_limit', retryable: false });
  }
}

/** The `errors` map of a 422: field name → what was wrong / allowed (structure not fixed by the spec). */
export type FieldErrors = Record<string, unknown>;

/** 422: validation failure or a value naming something that does not exist. The service declines to guess. */
export class ValidationError extends ApiError {
  override readonly name: string = 'ValidationError';
  /** Offending fields and what was allowed, as the service sent them (`{}` when absent). */
  readonly errors: FieldErrors;
  constructor(i: Init & { errors?: FieldErrors | undefined }) {
    super({ ...i, code: i.code ?? 'validation_failed', retryable: false });
    this.errors = i.errors ?? {};
  }
}
/** 422 on a request whose Idempotency-Key was already used with a different body. */
export class IdempotencyKeyReusedError extends ValidationError {
  override readonly name = 'IdempotencyKeyReusedError';
  constructor(i: Init & { errors?: FieldErrors | undefined }) {
    super({ ...i, code: 'idempotency_key_reused' });
  }
}
/** 409: a request with the same Idempotency-Key is still in flight; retry later with the same key. */
export class IdempotencyInFlightError extends ApiError {
  override readonly name = 'IdempotencyInFlightError';
  constructor(i: Init) {
    super({ ...i, code: i.code ?? 'idempotency_in_flight', retryable: true });
  }
}
/** 429 for the burst limit. `retryAfterMs` comes from `Retry-After`. */
export class RateLimitedError extends ApiError {
  override readonly name = 'RateLimitedError';
  declare readonly retryAfterMs: number;
  constructor(i: Init & { retryAfterMs: number }) {
    super({ ...i, code: i.code ?? 'rate_limited', retryable: true });
  }
}
/**
 * The monthly allowance is spent: a 429 whose quota headers say 0 remain (or whose
 * Retry-After points beyond the burst window), or a call refused locally because
 * another process already learned it. Not retryable before `resetAt`.
 */
export class QuotaExhaustedError extends ApiError {
  override readonly name = 'QuotaExhaustedError';
  readonly resetAt: Date;
  constructor(i: Init & { resetAt: Date }) {
    super({ ...i, code: i.code ?? 'quota_exhausted', retryable: false });
    this.resetAt = i.resetAt;
  }
}
/** 5xx: unexpected failure on the service. */
export class ServerError extends ApiError {
  override readonly name = 'ServerError';
  constructor(i: Init) {
    super({ ...i, code: i.code ?? 'server_error', retryable: true });
  }
}
/** The request could not be sent or the answer not read (connection refused, reset, DNS …). */
export class NetworkError extends ApiError {
  override readonly name: string = 'NetworkError';
  constructor(i: Omit<Init, 'status'>) {
    super({ ...i, status: 0, code: i.code ?? 'network_error', retryable: true });
  }
}
/** No answer within `timeoutMs`. Retryable: the request may or may not have been processed. */
export class TimeoutError extends NetworkError {
  override readonly name = 'TimeoutError';
  constructor(i: Omit<Init, 'status'>) {
    super({ ...i, code: 'timeout' });
  }
}
/**
 * A write without an Idempotency-Key (e.g. `leads.create`, which the spec does
 * not mark IK) failed in a way that may have reached the service (timeout,
 * connection lost, 5xx): repeating it could apply it twice, so it is not
 * retryable; the worker dead-letters it with this reason for a person to check.
 */
export class OutcomeUnknownError extends ApiError {
  override readonly name = 'OutcomeUnknownError';
  constructor(cause: ApiError) {
    super({
      status: cause.status,
      code: 'outcome_unknown',
      retryable: false,
      op: cause.op,
      requestId: cause.requestId,
      body: cause.body,
      cause,
      message: `${cause.message} — the call carries no Idempotency-Key and may have been applied; not repeated`,
    });
  }
}

/**
 * An answer the client cannot read as the spec describes (bad JSON, schema
 * mismatch). For a list, `records` names each malformed record of the page (its
 * position, its id and what is wrong), and so does the message.
 */
export class UnexpectedResponseError extends ApiError {
  override readonly name = 'UnexpectedResponseError';
  readonly records: readonly MalformedRecord[];
  constructor(i: Init & { records?: readonly MalformedRecord[] }) {
    const { records = [], ...init } = i;
    super({ ...init, code: init.code ?? 'unexpected_response', retryable: false });
    this.records = records;
  }
}
/**
 * A request refused by the client before sending because it breaks a limit of
 * the spec (e.g. text over 4096 characters). `field` names the offending field
 * (a dotted path such as `buttons.2`), `allowed` says what would be accepted.
 */
export class RequestValidationError extends ApiError {
  override readonly name = 'RequestValidationError';
  readonly field: string;
  readonly allowed: string;
  constructor(field: string, allowed: string, op?: string) {
    super({ status: 0, code: 'request_invalid', retryable: false, op, message: `${op ? `${op}: ` : ''}${field}: ${allowed}` });
    this.field = field;
    this.allowed = allowed;
  }
}

/** What {@link errorFromResponse} needs to know about an answer. */
export interface ErrorContext {
  status: number;
  headers: Headers;
  /** Parsed JSON body, or undefined when the body was empty or not JSON. */
  body: unknown;
  /** Whether the request carried an Idempotency-Key. */
  hadIdempotencyKey: boolean;
  op?: string | undefined;
  /** Now, for turning Retry-After into a reset time. */
  nowMs: number;
}

/** Parses `Retry-After` (seconds or an HTTP date) into milliseconds from now. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, Math.round(secs * 1000));
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : undefined;
}

/** Parses `X-Quota-Reset` (ISO timestamp, HTTP date or epoch seconds). */
export function parseResetHeader(value: string | null): Date | undefined {
  if (!value) return undefined;
  const n = Number(value);
  if (Number.isFinite(n)) return new Date(n < 1e12 ? n * 1000 : n);
  const t = Date.parse(value);
  return Number.isFinite(t) ? new Date(t) : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether a 429 is about the monthly allowance rather than the burst. */
function isQuota429(ctx: ErrorContext, code: string | undefined, retryAfterMs: number | undefined): boolean {
  if (code !== undefined && /quota|monthly/i.test(code)) return true;
  if (ctx.headers.get(HEADERS.quotaRemaining) === '0') return true;
  // A burst Retry-After never exceeds the 10 s window; anything much longer means the monthly quota.
  return retryAfterMs !== undefined && retryAfterMs > BURST_WINDOW_MS * 6;
}

/**
 * The one mapping from an HTTP error answer to an error class (status first,
 * then the service's `code`). Keep every status→class decision here.
 */
export function errorFromResponse(ctx: ErrorContext): ApiError {
  const body = ctx.body;
  const b = isRecord(body) ? body : {};
  const code = typeof b['code'] === 'string' ? b['code'] : undefined;
  const serviceMessage = typeof b['message'] === 'string' ? b['message'] : undefined;
  const errors = isRecord(b['errors']) ? b['errors'] : undefined;
  const requestId = ctx.headers.get('x-request-id') ?? undefined;
  const message = `${ctx.op ? `${ctx.op}: ` : ''}${ctx.status}${serviceMessage ? ` ${serviceMessage}` : ''}`;
  const retryAfterMs = parseRetryAfter(ctx.headers.get(HEADERS.retryAfter), ctx.nowMs);
  const base: Init = { status: ctx.status, message, requestId, op: ctx.op, body, retryAfterMs, ...(code ? { code } : {}) };
  const s = ctx.status;

  if (s === 400) return new BadRequestError(base);
  if (s === 401) return code === 'token_expired' ? new TokenExpiredError(base) : new UnauthorizedError(base);
  if (s === 402) return new PlanLimitError(base);
  if (s === 403) return code === 'legacy_key_retired' ? new LegacyKeyRetiredError(base) : new ForbiddenError(base);
  if (s === 404) return new NotFoundError(base);
  if (s === 409) return new IdempotencyInFlightError(base);
  if (s === 422) {
    // Rule (spec: "reuse of an Idempotency-Key with a different body" answers 422):
    // only a request that carried a key can be a reuse, and the answer must say so
    // by its code or by naming the key in `errors`.
    const reused =
      ctx.hadIdempotencyKey &&
      (code === 'idempotency_key_reused' ||
        (code !== undefined && /idempotency/i.test(code)) ||
        (errors !== undefined && Object.keys(errors).some((k) => /idempotency/i.test(k))));
    return reused ? new IdempotencyKeyReusedError({ ...base, errors }) : new ValidationError({ ...base, errors });
  }
  if (s === 429) {
    if (isQuota429(ctx, code, retryAfterMs)) {
      const resetAt = parseResetHeader(ctx.headers.get(HEADERS.quotaReset)) ?? new Date(ctx.nowMs + (retryAfterMs ?? 0));
      return new QuotaExhaustedError({ ...base, resetAt });
    }
    return new RateLimitedError({ ...base, retryAfterMs: retryAfterMs ?? 1000 });
  }
  if (s >= 500) return new ServerError(base);
  if (s >= 400) return new ApiError({ ...base, code: code ?? `http_${s}`, retryable: false });
  return new UnexpectedResponseError({ ...base, message: `${message} (unexpected status)` });
}
