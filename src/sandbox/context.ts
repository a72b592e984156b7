import type { Context } from 'hono';
import type { WebhookEmitter } from './events/emitter.js';
import type { FaultEffect } from './faults.js';
import type { BurstResult, QuotaResult } from './rate-limit.js';
import type { SandboxState } from './state.js';
import { ApiError, forbidden } from './errors.js';
import type { Ability, Teammate, Token, Workspace } from './types.js';

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
  };
}

/** Everything a route module needs; passed explicitly instead of module state. */
export interface Deps {
  state: SandboxState;
  emitter: WebhookEmitter;
}

export type Ctx = Context<SandboxEnv>;

/**
 * The caller, after checking the ability (spec: Authentication 10; every call
 * needs the stated ability; 403 otherwise). `null` ability means none needed.
 */
export function caller(c: Ctx, ability: Ability | null): AuthInfo {
  const auth = c.get('auth');
  if (!auth) throw new ApiError(401, 'Unauthenticated.');
  if (ability && !auth.token.abilities.includes(ability)) {
    throw forbidden(`This action requires the ${ability} ability.`, 'missing_ability');
  }
  return auth;
}

/** Spec, Authentication 11: phone filter, phone rules and writing a phone need the view-phone permission. */
export function requirePhonePermission(auth: AuthInfo, what: string): void {
  if (!auth.teammate.viewPhone) throw forbidden(`${what} requires the view-phone permission.`, 'missing_permission');
}
