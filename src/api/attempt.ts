import { describeMismatch, malformedRecords } from './mismatch.js';
import { HEADERS } from '../spec/index.js';
import { NetworkError, TimeoutError, UnexpectedResponseError, errorFromResponse, parseResetHeader } from './errors.js';
import type { Permit } from './rate-limiter.js';
import { rateLimitInfo, type ApiResponse, type RateLimitInfo } from './response.js';
import type { QueryValue, RequestSpec, TransportOptions } from './transport-types.js';

// One attempt of a call (src/api/transport.ts repeats it): the HTTP request with its
// timeout and the caller's signal, the limiter's bookkeeping, and the answer mapped
// to a parsed response or to an ApiError.

/** The transport's options with the checked base URL (no trailing slash). */
export interface TransportState extends TransportOptions {
  base: string;
}

/** One attempt: what is sent, its number, and the limiter's permit for it. */
export interface Attempt<T> {
  spec: RequestSpec<T>;
  key: string | undefined;
  n: number;
  permit: Permit | undefined;
}

/** The response's metadata, before its body is parsed. */
type AnswerMeta = Omit<ApiResponse<unknown>, 'data'>;

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

function requestHeaders(o: TransportState, spec: RequestSpec<unknown>, key: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${o.token}`,
    accept: 'application/json',
  };
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  if (key !== undefined) headers[HEADERS.idempotencyKey] = key;
  return headers;
}

function logBookkeepingFailure(o: TransportState, op: string): (e: unknown) => void {
  return (e) => o.logger?.debug({ op, err: String(e) }, 'rate limiter bookkeeping failed');
}

/**
 * Sends the request and reads its body, within the timeout and the caller's signal.
 * Throws TimeoutError, NetworkError or the caller's abort reason; the permit is
 * always given back.
 */
async function send<T>(o: TransportState, { spec, key, permit }: Attempt<T>): Promise<{ res: Response; json: unknown }> {
  const url = buildUrl(o.base, spec.path, spec.query);
  const headers = requestHeaders(o, spec, key);
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
  try {
    const init: RequestInit = { method: spec.method, headers, signal: ctrl.signal };
    if (spec.body !== undefined) init.body = JSON.stringify(spec.body);
    const res = await o.fetch(url, init);
    return { res, json: await readJson(res) };
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
    await permit?.done().catch(logBookkeepingFailure(o, spec.op));
  }
}

/** Tells the limiter what the answer's rate-limit headers said. */
async function observeLimits(o: TransportState, op: string, info: RateLimitInfo, permit: Permit | undefined): Promise<void> {
  if (o.limiter && permit) {
    await o.limiter.observe({ ...info, acquiredAtMs: permit.acquiredAtMs }).catch(logBookkeepingFailure(o, op));
  }
}

/** A 2xx answer: remembered for the run, then parsed with the spec's schema (UnexpectedResponseError when it does not match). */
function accepted<T>(o: TransportState, { spec, key }: Attempt<T>, meta: AnswerMeta, json: unknown): ApiResponse<T> {
  if (key !== undefined && o.memo) o.memo.set(key, { json, status: meta.status, requestId: meta.requestId });
  if (!spec.schema) return { ...meta, data: undefined as T };
  const parsed = spec.schema.safeParse(json);
  if (!parsed.success) {
    const records = malformedRecords(json, parsed.error.issues);
    const where = describeMismatch(json, parsed.error.issues, records);
    throw new UnexpectedResponseError({
      status: meta.status,
      op: spec.op,
      message: `${spec.op}: answer does not match the spec (${where})`,
      body: json,
      records,
    });
  }
  return { ...meta, data: parsed.data };
}

/** Makes one attempt: the parsed response, or the ApiError its answer (or its failure) maps to. */
export async function attempt<T>(o: TransportState, a: Attempt<T>): Promise<ApiResponse<T>> {
  const { res, json } = await send(o, a);
  const info = rateLimitInfo(res.headers, parseResetHeader);
  await observeLimits(o, a.spec.op, info, a.permit);
  const meta: AnswerMeta = {
    status: res.status,
    replayed: res.headers.get(HEADERS.idempotentReplay) === 'true',
    idempotencyKey: a.key,
    requestId: res.headers.get('x-request-id') ?? undefined,
    rateLimit: info,
    attempts: a.n,
    headers: res.headers,
  };
  if (res.status >= 200 && res.status < 300) return accepted(o, a, meta, json);
  throw errorFromResponse({
    status: res.status,
    headers: res.headers,
    body: json,
    hadIdempotencyKey: a.key !== undefined,
    op: a.spec.op,
    nowMs: o.now(),
  });
}
