import type { MiddlewareHandler } from 'hono';
import type { SandboxEnv } from '../context.js';
import { ApiError } from '../errors.js';
import type { SandboxState } from '../state.js';

/** Extracts the bearer token of the Authorization header, or null. */
export function bearer(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1]! : null;
}

/**
 * Spec, Authentication: the token belongs in the header only (a `token` or
 * `api_token` query parameter is 400); a missing or unknown token is 401; a
 * token past its date is 401 `token_expired`; a legacy full-access key after
 * retirement is 403 `legacy_key_retired`; a token whose teammate lost access
 * has no reach (401).
 */
export function authenticate(state: SandboxState): MiddlewareHandler<SandboxEnv> {
  return async (c, next) => {
    const url = new URL(c.req.url);
    if (url.searchParams.has('token') || url.searchParams.has('api_token')) {
      throw new ApiError(400, 'Send the token in the Authorization header, never in the query string.', 'token_in_query');
    }
    const value = bearer(c.req.header('Authorization'));
    if (!value) throw new ApiError(401, 'Unauthenticated.');
    const token = state.tokens.find((t) => t.value === value);
    if (!token) throw new ApiError(401, 'Unauthenticated.');
    const workspace = state.workspace(token.workspaceId);
    const teammate = workspace.teammates.find((t) => t.id === token.teammateId);
    if (!teammate || !teammate.active) throw new ApiError(401, 'Unauthenticated.');
    const forcedExpiry = c.get('faults')?.tokenExpired ?? false;
    if (forcedExpiry || (token.expiresAt !== null && state.now() >= token.expiresAt)) {
      throw new ApiError(401, 'The access token has expired.', 'token_expired');
    }
    if (token.legacy && state.settings.legacyRetired) {
      throw new ApiError(403, 'Legacy full-access keys have been retired; create a scoped token.', 'legacy_key_retired');
    }
    c.set('auth', { token, workspace, teammate });
    await next();
  };
}
