import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, workspaceConfig, type Config, type WorkspaceSpec } from '../../src/config/index.js';

/**
 * A deployment of many read from a WORKSPACES_FILE written for the test (one entry per id, a loopback API URL),
 * and the Config of each workspace (workspaceConfig). `env` adds to the deployment's variables (REDIS_URL, QUEUE_PREFIX…).
 */
export function workspacesDeployment(ids: readonly string[], env: Record<string, string>): { config: Config; configs: Config[] } {
  const dir = mkdtempSync(join(tmpdir(), 'sy-ws-'));
  const file = join(dir, 'workspaces.json');
  const workspaces = ids.map((id) => ({ id, apiUrl: 'http://127.0.0.1:9/api/v1', token: `tok_${id}`, secrets: [`whsec_${id}`] }));
  writeFileSync(file, JSON.stringify({ workspaces }));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT: '3s', ...env, WORKSPACES_FILE: file });
  const configs = (config.workspaces ?? []).map((ws: WorkspaceSpec) => workspaceConfig(config, ws));
  return { config, configs };
}
