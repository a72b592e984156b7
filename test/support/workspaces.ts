import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, workspaceConfig, type Config, type WorkspaceSpec } from '../../src/config/index.js';

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
