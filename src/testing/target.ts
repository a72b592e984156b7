import type { CallEvent } from '../api/index.js';
import type { InlineRunDeps } from '../replay/index.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { IN_PROCESS_BASE_URL, sandboxFetch, sandboxToken } from './sandbox-api.js';
import type { TestCall, TestHandlerOptions } from './types.js';

/** The API a test run calls: `options.api` over HTTP, else the given or a fresh sandbox in process (burst as the worker's default). */
export function runTarget(
  options: Pick<TestHandlerOptions, 'api' | 'sandbox' | 'token'>,
  clock: (() => number) | undefined,
): { api: InlineRunDeps['api']; sandbox: Sandbox | undefined } {
  if (options.api) {
    const { url, token, fetch = globalThis.fetch.bind(globalThis) } = options.api;
    return { api: { baseUrl: url, token, burst: 30, fetch }, sandbox: undefined };
  }
  const sandbox = options.sandbox ?? createSandbox(clock ? { clock } : {});
  return {
    api: { baseUrl: IN_PROCESS_BASE_URL, token: options.token ?? sandboxToken(sandbox), burst: 30, fetch: sandboxFetch(sandbox) },
    sandbox,
  };
}

/** A run's API requests as a test sees them (bodies copied as the JSON sent). */
export function testCalls(calls: readonly CallEvent[]): TestCall[] {
  return calls.map((c) => ({
    op: c.op,
    method: c.method,
    path: c.path,
    status: c.status,
    idempotencyKey: c.idempotencyKey,
    body: c.body === undefined ? undefined : (JSON.parse(JSON.stringify(c.body)) as unknown),
    attempt: c.attempt,
    replayed: c.replayed,
  }));
}
