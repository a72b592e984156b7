import { createSandbox, type RunningSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../../src/api/index.js';

export const TOKENS = {
  full: 'sbx_full_acme', read: 'sbx_read_acme', contacts: 'sbx_contacts_acme', nophone: 'sbx_nophone_acme',
  expired: 'sbx_expired_acme', legacy: 'sbx_legacy_acme', other: 'sbx_full_other',
} as const;

/** Seed identifiers of the first workspace, read from `GET /_sandbox/workspaces` (never hard-coded). */
export interface AcmeSeed {
  channels: { id: number; name: string; public: boolean }[];
  lifecycle_stages: { id: number; name: string; outcome: string | null }[];
  labels: { id: number; name: string }[];
  pipelines: { id: number; name: string; stages: { id: number; name: string; kind: string }[] }[];
  closing_notes: { category: string }[];
  teammates: { id: number; active: boolean }[];
  products: { id: number; name: string; track_stock: boolean; available: number | null; is_active: boolean; variants: { id: number; available: number | null }[] }[];
  segments: { id: number; name: string }[];
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
      method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status === 204) return undefined as T;
    const json = (await res.json()) as { data: T };
    if (!res.ok) throw new Error(`hook ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  return {
    sandbox,
    running,
    client: (extra = {}) => createApiClient({ baseUrl: running.baseUrl, token: TOKENS.full, burst: 10_000, retry: { baseMs: 10 }, ...extra }),
    hook,
    seed: async () => (await hook<AcmeSeed[]>('GET', '/workspaces'))[0]!,
    close: () => running.close(),
  };
}
