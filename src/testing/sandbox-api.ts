import { createApiClient, type ApiClient, type ApiClientOptions } from '../api/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { API_BASE } from '../sandbox/internal.js';

/**
 * The base URL the in-process sandbox is called at. Nominal: nothing listens
 * there, every request goes straight to the sandbox app's `fetch`.
 */
export const IN_PROCESS_BASE_URL = `http://localhost${API_BASE}`;

/** A `fetch` that hands each request to the sandbox's app in this process: no port, no socket. */
export function sandboxFetch(sandbox: Sandbox): typeof fetch {
  return async (input, init) => sandbox.app.fetch(new Request(input, init));
}

/** The sandbox's full-access token of workspace 1 (`sbx_full_acme` unless created with `token`). */
export function sandboxToken(sandbox: Sandbox): string {
  const full = sandbox.tokens.find((t) => t.label === 'full');
  if (!full) throw new TypeError('the sandbox has no "full" token');
  return full.token;
}

/**
 * A client of the sandbox in this process, to arrange a test's records and
 * check what a handler changed (`await sandboxClient(s).contacts.get(36)`).
 * Its calls are in the sandbox's request log like any other.
 */
export function sandboxClient(sandbox: Sandbox, options: Partial<Omit<ApiClientOptions, 'baseUrl' | 'fetch'>> = {}): ApiClient {
  return createApiClient({
    token: sandboxToken(sandbox),
    rateLimiter: false,
    ...options,
    baseUrl: IN_PROCESS_BASE_URL,
    fetch: sandboxFetch(sandbox),
  });
}
