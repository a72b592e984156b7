import type { MiddlewareHandler } from 'hono';
import { HEADERS } from '../../spec/index.js';
import type { SandboxEnv } from '../context.js';
import type { SandboxState } from '../state.js';
import { tokenHash } from '../tokens.js';
import { bearer } from './auth.js';
import { limitHeaders } from './limits.js';

function parseBody(raw: string): unknown {
  if (raw === '') return null;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/**
 * Outermost API middleware: stamps the rate-limit headers on every answer
 * (spec: Limits) and writes the request log entry. The log keeps the token's
 * label and a short hash, never the token itself (spec: only a hash is stored).
 */
export function requestLog(state: SandboxState, apiPath: (p: string) => string): MiddlewareHandler<SandboxEnv> {
  return async (c, next) => {
    const started = performance.now();
    const time = new Date(state.now()).toISOString();
    const raw = ['GET', 'HEAD'].includes(c.req.method) ? '' : await c.req.text();
    await next();
    for (const [k, v] of Object.entries(limitHeaders(c.get('burst'), c.get('quota'), state.burstOf(c.get('auth')?.workspace.id)))) {
      c.res.headers.set(k, v);
    }
    const value = bearer(c.req.header('Authorization'));
    const known = value ? state.tokens.find((t) => t.value === value) : undefined;
    state.log.add({
      time,
      method: c.req.method,
      path: apiPath(c.req.path),
      query: Object.fromEntries(new URL(c.req.url).searchParams),
      body: parseBody(raw),
      idempotency_key: c.req.header(HEADERS.idempotencyKey) ?? null,
      token: value ? { label: known?.label ?? null, hash: tokenHash(value) } : null,
      status: c.res.status,
      replay: c.res.headers.get(HEADERS.idempotentReplay) === 'true',
      duration_ms: Math.round(performance.now() - started),
    });
  };
}

/**
 * Spec, Authentication 6: the real service refuses plain HTTP with 403. The
 * sandbox serves plain HTTP on loopback, so this is off unless `requireTls`
 * is set; then only calls with `X-Forwarded-Proto: https` pass.
 */
export function tlsGuard(state: SandboxState): MiddlewareHandler<SandboxEnv> {
  return async (c, next) => {
    if (state.settings.requireTls && c.req.header('X-Forwarded-Proto')?.toLowerCase() !== 'https') {
      return c.json({ message: 'Calls must use HTTPS.', code: 'tls_required' }, 403);
    }
    await next();
  };
}
