import type { MiddlewareHandler } from 'hono';
import type { Ctx, Deps, SandboxEnv } from '../context.js';
import { forbidden } from '../errors.js';
import type { GateRequest, PhoneUse } from '../domain/phone-use.js';
import type { Ability } from '../../spec/index.js';
import { maskPhones } from '../views/contacts.js';
import { faultDelay } from './faults.js';
import { idempotently } from './idempotent-replay.js';

/** What the view-phone check may read: path and query parameters, and the body when it is JSON. */
async function gateRequest(c: Ctx): Promise<GateRequest> {
  let body: unknown;
  if (!['GET', 'HEAD'].includes(c.req.method)) {
    try {
      const raw = await c.req.text();
      body = raw.trim() === '' ? undefined : JSON.parse(raw);
    } catch {
      body = undefined;
    }
  }
  return { param: (n) => c.req.param(n), query: (n) => c.req.query(n), body };
}

const isJson = (res: Response): boolean => res.headers.get('Content-Type')?.includes('application/json') ?? false;

/** The same JSON answer with every phone number masked (for a teammate without view-phone). */
async function masked(res: Response): Promise<Response> {
  return new Response(JSON.stringify(maskPhones(JSON.parse(await res.text()))), { status: res.status, headers: res.headers });
}

/**
 * A route's gate, in the order the checks must come (spec: Authentication 10
 * and 11; Limits): the token's ability (403), the view-phone permission for
 * what the request touches (403), then the Idempotency-Key (replay, 409 or
 * 422), then any injected latency, then the route. A replay is therefore only
 * served to a caller allowed to make the call. Routes render phone numbers in
 * full; they are masked here on the way out for a teammate without view-phone,
 * replays included, so a remembered answer is masked for whoever replays it.
 * `ability` null means the call needs none (GET /me).
 */
export function guard(deps: Deps, ability: Ability | null, phone?: PhoneUse): MiddlewareHandler<SandboxEnv> {
  return async (c, next) => {
    const auth = c.get('auth');
    if (ability && !auth.token.abilities.includes(ability)) {
      throw forbidden(`This action requires the ${ability} ability.`, 'missing_ability');
    }
    if (phone && !auth.teammate.viewPhone) {
      const what = phone(await gateRequest(c));
      if (what) throw forbidden(`${what} requires the view-phone permission.`, 'missing_permission');
    }
    c.set('gated', true);
    await idempotently(deps.state, c, async () => {
      await faultDelay(c);
      await next();
    });
    if (!auth.teammate.viewPhone && isJson(c.res)) c.res = await masked(c.res);
  };
}
