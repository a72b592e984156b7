import type { Context } from 'hono';
import type { WebhookEmitter } from './events/emitter.js';
import type { FaultEffect } from './faults.js';
import type { BurstResult, QuotaResult } from './rate-limit.js';
import type { SandboxState } from './state.js';
import { ApiError, forbidden } from './errors.js';
import type { Teammate, Token, Workspace } from './types.js';

/** Who is calling: the token, its workspace and the teammate who owns it. */
export interface AuthInfo {
  token: Token;
  workspace: Workspace;
  teammate: Teammate;
}

/** Hono environment of the API app. */
export interface SandboxEnv {
  Variables: {
    auth: AuthInfo;
    burst: BurstResult;
    quota: QuotaResult | null;
    faults: FaultEffect;
    /** Set by a route's guard once its checks passed (see middleware/guard.ts). */
    gated: boolean;
  };
}

/** Everything a route module needs; passed explicitly instead of module state. */
export interface Deps {
  state: SandboxState;
  emitter: WebhookEmitter;
}

export type Ctx = Context<SandboxEnv>;

/**
 * The caller of a route. Its ability and view-phone checks were made by the
 * route's guard (middleware/guard.ts); a route without a guard is a bug of
 * the sandbox, answered as a plain 500.
 */
export function caller(c: Ctx): AuthInfo {
  const auth = c.get('auth');
  if (!auth) throw new ApiError(401, 'Unauthenticated.');
  if (!c.get('gated')) throw new Error(`route ${c.req.method} ${c.req.path} has no guard`);
  return auth;
}

/** Spec, Authentication 11: phone filter, phone rules and writing a phone need the view-phone permission. */
export function requirePhonePermission(auth: AuthInfo, what: string): void {
  if (!auth.teammate.viewPhone) throw forbidden(`${what} requires the view-phone permission.`, 'missing_permission');
}
