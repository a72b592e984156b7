import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, workspaceConfig, type Config, type WorkspaceSpec } from '../../src/config/index.js';
import { sign } from '../../src/events/signature.js';
import { prepareWorker } from '../../src/runtime/worker.js';
import { startService, type RunningService } from '../../src/runtime/service.js';
import { createSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import type { LoggedRequest } from '../../src/sandbox/request-log.js';
import { testRedisUrl, uniquePrefix } from './redis.js';
import { T } from './sandbox.js';
import { memoryLogger } from './service.js';

/** The webhook secret {@link workspacesDeployment} gives workspace `id`. */
export const workspaceSecret = (id: string): string => `whsec_test_${id}`;

/**
 * A deployment of many read from a WORKSPACES_FILE written for the test (one entry per id, all on the API `api`),
 * and the Config of each workspace (workspaceConfig). `env` adds to the deployment's variables (REDIS_URL, QUEUE_PREFIX…).
 */
export function workspacesDeployment(
  ids: readonly string[],
  env: Record<string, string>,
  api: { url: string; token: string } = { url: 'http://127.0.0.1:9/api/v1', token: 'tok' },
): { config: Config; configs: Config[] } {
  const dir = mkdtempSync(join(tmpdir(), 'sy-ws-'));
  const file = join(dir, 'workspaces.json');
  const workspaces = ids.map((id) => ({ id, apiUrl: api.url, token: api.token, secrets: [workspaceSecret(id)] }));
  writeFileSync(file, JSON.stringify({ workspaces }));
  // Read once, by loadConfig: the file (tokens in it) does not outlive it.
  let config: Config;
  try {
    config = loadConfig({ PORT: '0', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT: '3s', ...env, WORKSPACES_FILE: file });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const configs = (config.workspaces ?? []).map((ws: WorkspaceSpec) => workspaceConfig(config, ws));
  return { config, configs };
}

const HANDLERS = fileURLToPath(new URL('./handlers/workspaces', import.meta.url));
export const WS_SECRET = { acme: 'whsec_acme_test', other: 'whsec_other_test' } as const;
/** The sandbox's token labels of its two seeded workspaces' full-access tokens. */
const LABEL = { acme: 'full', other: 'other-workspace-full' } as const;
export type Ws = keyof typeof WS_SECRET;

export interface TwoWorkspaces {
  readonly service: RunningService;
  readonly api: RunningSandbox;
  /** The receiver's `http://host:port`. */
  readonly base: string;
  /** QUEUE_PREFIX (each workspace's keys are under `workspacePrefix(prefix, id)`). */
  readonly prefix: string;
  /** The temporary directory of the file, the spools and the captures. */
  readonly dir: string;
  readonly lines: string[];
  /** POSTs `body` to `/webhooks<path>` signed with `secret`. */
  post(path: string, body: string, secret: string): Promise<Response>;
  /** POSTs `body` to the workspace's own path, signed with its secret. */
  deliver(ws: Ws, body: string): Promise<Response>;
  /** The names of the contacts the workspace's handlers created, as its token's requests at the sandbox show them. */
  written(ws: Ws): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A deployment of two workspaces (WORKSPACES_FILE) in this process, as a user runs it: `acme` and `other`, the
 * sandbox's two seeded workspaces (each with its own token and webhook secret), the handlers of
 * test/support/handlers/workspaces, receiver and worker on the test Redis; spools and captures under `dir`.
 */
export async function startTwoWorkspaces(extraEnv: Record<string, string> = {}): Promise<TwoWorkspaces> {
  const dir = mkdtempSync(join(tmpdir(), 'sy-ws-'));
  const prefix = uniquePrefix('ws');
  const api = await createSandbox().listen(0);
  const file = join(dir, 'workspaces.json');
  const entry = (id: Ws, token: string) => ({ id, apiUrl: api.baseUrl, token, secrets: [WS_SECRET[id]] });
  writeFileSync(file, JSON.stringify({ workspaces: [entry('acme', T.full), entry('other', T.other)] }));
  const env = {
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    WORKSPACES_FILE: file,
    HANDLERS_DIR: HANDLERS,
    PORT: '0',
    HOST: '127.0.0.1',
    SHUTDOWN_TIMEOUT: '3s',
    SPOOL_DIR: join(dir, 'spool'),
    CAPTURE_DIR: join(dir, 'capture'),
    ...extraEnv,
  };
  const config = loadConfig(env, { requireSecrets: true });
  const { log, lines } = memoryLogger();
  let service: RunningService;
  try {
    service = await startService({ config, log, receiver: true, worker: await prepareWorker(config, log, env) });
  } catch (err) {
    await api.close();
    throw err;
  }
  const base = service.receiver?.http.url as string;
  const post = (path: string, body: string, secret: string) =>
    fetch(`${base}/webhooks${path}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-service-signature': sign(secret, body) },
    });
  return {
    service,
    api,
    base,
    prefix,
    dir,
    lines,
    post,
    deliver: (ws, body) => post(`/${ws}`, body, WS_SECRET[ws]),
    written: async (ws) => {
      const r = await fetch(`${api.url}/_sandbox/requests?method=POST&path=/contacts&status=201&token=${LABEL[ws]}`);
      return ((await r.json()) as { data: LoggedRequest[] }).data.map((e) => (e.body as { name: string }).name);
    },
    close: async () => {
      await service.close();
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
