import { createApiClient, type ApiClient, type ApiClientOptions } from '../../src/api/index.js';
import { createSandbox, type RunningSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { waitFor } from './wait.js';

/**
 * Sandboxes for tests, listening on an ephemeral loopback port in this process:
 * `start` (raw HTTP helpers, for the sandbox's own conformance tests) and
 * `startSandbox` (an API client on it, for the client's tests).
 */

/** Token values of the seed (see docs/sandbox.md). */
export const T = {
  full: 'sbx_full_acme',
  read: 'sbx_read_acme',
  contacts: 'sbx_contacts_acme',
  nophone: 'sbx_nophone_acme',
  expired: 'sbx_expired_acme',
  expiring: 'sbx_expiring_acme',
  legacy: 'sbx_legacy_acme',
  other: 'sbx_full_other',
} as const;

/** An HTTP answer; bodies default to `any` because tests read API JSON loosely (test-only type). */
export interface Answer<B = any> {
  status: number;
  headers: Headers;
  body: B;
}

/** Settings and ids of a seeded workspace, as GET /_sandbox/workspaces answers. */
export interface World {
  id: number;
  teammates: { id: number; name: string; active: boolean; view_phone: boolean }[];
  teams: { id: number; name: string }[];
  ai_agents: { id: number; name: string }[];
  channels: { id: number; name: string; type: string; public: boolean }[];
  lifecycle_stages: { id: number; name: string; role: string | null; outcome: string | null }[];
  labels: { id: number; name: string }[];
  pipelines: { id: number; name: string; stages: { id: number; name: string; kind: string }[] }[];
  segments: { id: number; name: string }[];
  products: { id: number; name: string; sku: string; variants: { id: number; sku: string }[] }[];
  contact_ids: number[];
  conversation_ids: number[];
  message_ids: number[];
  deal_ids: number[];
  order_ids: number[];
  task_ids: number[];
  lead_ids: number[];
}

/** A sandbox listening on an ephemeral loopback port, with small HTTP helpers. */
export interface Harness {
  sandbox: Sandbox;
  server: RunningSandbox;
  api<B = any>(
    method: string,
    path: string,
    opts?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Answer<B>>;
  hook<B = any>(method: string, path: string, body?: unknown): Promise<Answer<B>>;
  world(): Promise<[World, World]>;
  close(): Promise<void>;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* keep text */
  }
  return { status: res.status, headers: res.headers, body };
}

/** Starts one sandbox (burst high by default so only the rate-limit tests meet it). */
export async function start(options: SandboxOptions = {}): Promise<Harness> {
  const sandbox = createSandbox({ burst: 100_000, ...options });
  const server = await sandbox.listen(0);
  const api: Harness['api'] = async (method, path, opts = {}) => {
    const token = opts.token === undefined ? T.full : opts.token;
    const headers: Record<string, string> = { Accept: 'application/json', ...(opts.headers ?? {}) };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(server.baseUrl + path, {
      method,
      headers,
      ...(opts.body !== undefined ? { body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) } : {}),
    });
    return answer(res);
  };
  const hook: Harness['hook'] = async (method, path, body) => {
    const res = await fetch(`${server.url}/_sandbox${path}`, {
      method,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } } : {}),
    });
    return answer(res);
  };
  const world = async (): Promise<[World, World]> => (await hook('GET', '/workspaces')).body.data;
  return { sandbox, server, api, hook, world, close: () => server.close() };
}

/** Polls until `check` returns a value (or throws after `ms`): `waitFor` with the sandbox tests' defaults. */
export function eventually<V>(check: () => Promise<V | undefined | false> | V | undefined | false, ms = 5000): Promise<V> {
  return waitFor(check, ms, 20) as Promise<V>;
}

/** The seed's tokens under the name the API client tests use (one table: `T`). */
export const TOKENS = T;

/** Seed identifiers of the first workspace, read from `GET /_sandbox/workspaces` (never hard-coded). */
export interface AcmeSeed {
  channels: { id: number; name: string; public: boolean }[];
  lifecycle_stages: { id: number; name: string; outcome: string | null }[];
  labels: { id: number; name: string }[];
  pipelines: { id: number; name: string; stages: { id: number; name: string; kind: string }[] }[];
  closing_notes: { category: string }[];
  teammates: { id: number; active: boolean }[];
  products: {
    id: number;
    name: string;
    track_stock: boolean;
    available: number | null;
    is_active: boolean;
    variants: { id: number; available: number | null }[];
  }[];
  segments: { id: number; name: string }[];
  conversation_ids: number[];
}

export interface SandboxHarness {
  sandbox: Sandbox;
  running: RunningSandbox;
  /** A client on the sandbox (full-access token unless told). */
  client(extra?: Partial<ApiClientOptions>): ApiClient;
  /** Calls a `/_sandbox/` hook and returns its JSON `data`. */
  hook<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  seed(): Promise<AcmeSeed>;
  close(): Promise<void>;
}

/** Starts a sandbox on a free loopback port. Burst defaults high so endpoint tests are not throttled. */
export async function startSandbox(options: { burst?: number } = {}): Promise<SandboxHarness> {
  const sandbox = createSandbox({ burst: options.burst ?? 10_000 });
  const running = await sandbox.listen(0);
  const hook = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${running.url}/_sandbox${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status === 204) return undefined as T;
    const json = (await res.json()) as { data: T };
    if (!res.ok) throw new Error(`hook ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  return {
    sandbox,
    running,
    client: (extra = {}) =>
      createApiClient({ baseUrl: running.baseUrl, token: TOKENS.full, burst: 10_000, retry: { baseMs: 10 }, ...extra }),
    hook,
    seed: async () => (await hook<AcmeSeed[]>('GET', '/workspaces'))[0]!,
    close: () => running.close(),
  };
}
