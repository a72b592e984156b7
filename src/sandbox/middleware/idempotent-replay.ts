import { HEADERS } from '../../spec/index.js';
import type { Ctx } from '../context.js';
import { ApiError } from '../errors.js';
import { canonicalBody } from '../idempotency-store.js';
import { apiPath } from '../paths.js';
import type { SandboxState } from '../state.js';

/**
 * Which calls accept `Idempotency-Key` (spec: operations marked IK): every
 * POST, PUT and PATCH of the API except the search (a read) and the leads of
 * the older overview (not marked). Others ignore the header.
 */
export function acceptsIdempotencyKey(method: string, path: string): boolean {
  if (!['POST', 'PUT', 'PATCH'].includes(method)) return false;
  return path !== '/contacts/search' && !path.startsWith('/leads');
}

/**
 * Spec, Limits and Errors: a retry with the same key answers the first
 * response with `Idempotent-Replay: true`; the same key with another request
 * is 422; while the first is in flight, 409; a failed (non-2xx) request is not
 * remembered. Memory is per workspace and lasts 24 h on the sandbox clock.
 *
 * Runs inside a route's guard, so the caller has already passed
 * authentication, the route's ability and the view-phone permission: a key
 * never answers anyone who could not make the call. `run` does the work.
 */
export async function idempotently(state: SandboxState, c: Ctx, run: () => Promise<void>): Promise<void> {
  const key = c.req.header(HEADERS.idempotencyKey);
  const path = apiPath(c.req.path);
  if (!key || !acceptsIdempotencyKey(c.req.method, path)) return run();
  const scope = String(c.get('auth').workspace.id);
  const fingerprint = `${c.req.method} ${path}\n${canonicalBody(await c.req.text())}`;
  const decision = state.idempotency.begin(scope, key, fingerprint, state.now());
  if (decision.kind === 'in_flight') {
    throw new ApiError(409, 'A request with this Idempotency-Key is still in flight; retry later.', 'idempotency_in_flight');
  }
  if (decision.kind === 'mismatch') {
    throw new ApiError(422, 'This Idempotency-Key was used with a different request.', 'idempotency_key_reused', {
      [HEADERS.idempotencyKey]: ['was already used with a different request body'],
    });
  }
  if (decision.kind === 'replay') {
    const headers = new Headers({ [HEADERS.idempotentReplay]: 'true' });
    if (decision.answer.contentType) headers.set('Content-Type', decision.answer.contentType);
    c.res = new Response(decision.answer.status === 204 ? null : decision.answer.body, { status: decision.answer.status, headers });
    return;
  }
  try {
    await run();
  } finally {
    const res = c.res;
    if (res.status >= 200 && res.status < 300) {
      const text = await res.clone().text();
      state.idempotency.complete(
        scope,
        key,
        fingerprint,
        { status: res.status, body: text, contentType: res.headers.get('Content-Type') },
        state.now(),
      );
    } else {
      state.idempotency.forget(scope, key);
    }
  }
}
