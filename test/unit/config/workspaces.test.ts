import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../src/config/config.js';
import { WorkspaceChoiceError, selectWorkspace, workspaceConfig, workspaceConfigs } from '../../../src/config/workspaces.js';

// The Config of one workspace of a deployment of many, as every tool and process part gets it.

const dir = mkdtempSync(join(tmpdir(), 'sy-workspace-config-'));
const acme = { id: 'acme', apiUrl: 'https://acme.example.com/api/v1', token: 'tok_acme', secrets: ['whsec_a1', 'whsec_a0'], burst: 40 };
const beta = { id: 'beta', apiUrl: 'http://127.0.0.1:4010/api/v1', token: 'tok_beta', secrets: ['whsec_b'], weight: 3 };

function deployment(workspaces: unknown[], env: Record<string, string> = {}): Config {
  const path = join(dir, `ws-${workspaces.length}-${Object.keys(env).join('-')}.json`);
  writeFileSync(path, JSON.stringify({ workspaces }));
  return loadConfig({ WORKSPACES_FILE: path, ...env }, { requireSecrets: true, requireApiToken: true });
}
const one = loadConfig({ WEBHOOK_SECRETS: 's1', WORKSPACE_API_URL: 'https://x.example.com/api/v1', WORKSPACE_API_TOKEN: 't' });
const choiceError = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(WorkspaceChoiceError);
    return (err as Error).message;
  }
  throw new Error('expected a WorkspaceChoiceError');
};

describe('workspaceConfig', () => {
  it("is the deployment's Config with the workspace's prefix (hash-tagged), paths, API, token, burst, secrets and weight", () => {
    const base = deployment([acme, beta], { QUEUE_PREFIX: 'sy', WEBHOOK_PATH: '/hooks/', SPOOL_DIR: '/var/spool/sy/', PORT: '3100' });
    const [a, b] = workspaceConfigs(base) as [Config, Config];
    expect(a).toMatchObject({
      workspaceId: 'acme',
      workspaceWeight: 1,
      queuePrefix: '{sy:acme}',
      webhookPath: '/hooks/acme',
      spoolDir: '/var/spool/sy/acme',
      webhookSecrets: ['whsec_a1', 'whsec_a0'],
      workspaceApiUrl: 'https://acme.example.com/api/v1',
      workspaceApiToken: 'tok_acme',
      workspaceApiBurst: 40,
    });
    expect(b).toMatchObject({ workspaceId: 'beta', workspaceWeight: 3, queuePrefix: '{sy:beta}', workspaceApiBurst: 30 });
    // Everything else is the deployment's, and the result still knows the deployment.
    expect(a.port).toBe(3100);
    expect(a.history).toBe(base.history);
    expect(a.workspaces).toBe(base.workspaces);
    expect(Object.isFrozen(a)).toBe(true);
  });

  it('takes a hash-tagged QUEUE_PREFIX apart: one tag per workspace', () => {
    expect(workspaceConfigs(deployment([acme], { QUEUE_PREFIX: '{switchyard}' }))[0]?.queuePrefix).toBe('{switchyard:acme}');
  });

  it("derives from the deployment also when given a workspace's Config (never twice)", () => {
    const base = deployment([acme, beta]);
    const a = selectWorkspace(base, 'acme');
    expect(selectWorkspace(a, 'beta')).toMatchObject({ queuePrefix: '{switchyard:beta}', webhookPath: '/webhooks/beta' });
    expect(workspaceConfig(a, base.workspaces?.[0] as never)).toMatchObject({
      queuePrefix: '{switchyard:acme}',
      webhookPath: '/webhooks/acme',
    });
    expect(workspaceConfigs(a).map((c) => c.queuePrefix)).toEqual(['{switchyard:acme}', '{switchyard:beta}']);
  });

  it('a deployment of one is its own single workspace, unchanged', () => {
    expect(workspaceConfigs(one)).toEqual([one]);
    expect(one).toMatchObject({ workspaceId: 'default', workspaces: undefined, queuePrefix: 'switchyard', webhookPath: '/webhooks' });
  });
});

describe('selectWorkspace (a tool’s --workspace)', () => {
  it('a deployment of one: no flag or default; any other id is refused, saying why', () => {
    expect(selectWorkspace(one, undefined)).toBe(one);
    expect(selectWorkspace(one, 'default')).toBe(one);
    expect(choiceError(() => selectWorkspace(one, 'acme'))).toBe(
      '--workspace acme: this deployment serves one workspace (no WORKSPACES_FILE); leave --workspace out, or set WORKSPACES_FILE',
    );
  });

  it('a deployment of many: the flag is needed when there is more than one, listing the ids', () => {
    const base = deployment([acme, beta]);
    expect(selectWorkspace(base, 'beta').workspaceId).toBe('beta');
    expect(choiceError(() => selectWorkspace(base, undefined))).toBe(
      'this deployment serves 2 workspaces (acme, beta): say which with --workspace <id>',
    );
    expect(selectWorkspace(deployment([beta]), undefined).workspaceId).toBe('beta');
  });

  it('an unknown id: did you mean, and the ids (control characters made inert)', () => {
    const base = deployment([acme, beta]);
    expect(choiceError(() => selectWorkspace(base, 'acne'))).toMatch(
      /^--workspace acne: no such workspace in .*\.json \(did you mean acme\?\); expected one of acme, beta$/,
    );
    expect(choiceError(() => selectWorkspace(base, 'zzzzzz'))).toMatch(/no such workspace in .*\.json; expected one of acme, beta$/);
    expect(choiceError(() => selectWorkspace(base, 'x\u001b[2J'))).toContain('--workspace x\\u001b[2J:');
  });
});
