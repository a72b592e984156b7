import { mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { devCommand, KEPT_SANDBOX_FILE } from '../../../src/cli/dev.js';
import { devWorkspacesConfig, workspacesFlag, writeWorkspacesFile } from '../../../src/cli/dev-workspaces.js';
import { loadConfig, workspaceConfigs } from '../../../src/config/index.js';
import { devPlan } from '../../../src/runtime/dev-env.js';
import { createSandbox } from '../../../src/sandbox/index.js';
import { memoryIo } from '../../support/io.js';
import { cliConfig } from '../../../src/cli/connect.js';
import { recordReceiver } from '../../../src/cli/live-receiver.js';

const project = (): string => mkdtempSync(join(tmpdir(), 'sy-devws-'));
const env = { WEBHOOK_SECRETS: 'whsec_dev', PORT: '3100', SANDBOX_PORT: '4100' };

/** dev's Config for `--workspaces` in a project: the plan's environment loaded, the workspaces added. */
function served(dir: string, ids = ['acme', 'other']) {
  const plan = devPlan(env, dir, { workspaces: ids });
  const config = devWorkspacesConfig(loadConfig({ ...plan.env, SWITCHYARD_HOME: join(dir, '.switchyard') }), plan.sandbox!.workspaces!);
  return { plan, config };
}

describe('dev --workspaces: the Config it serves', () => {
  it('makes a deployment of many in memory: each workspace its own prefix, webhook path, sandbox token and secret', () => {
    const { plan, config } = served(project());
    const [acme, other] = workspaceConfigs(config);
    expect(config.workspaces?.map((w) => w.id)).toEqual(['acme', 'other']);
    expect([acme!.workspaceId, acme!.webhookPath, acme!.workspaceApiToken, acme!.webhookSecrets]).toEqual([
      'acme',
      '/webhooks/acme',
      'sbx_full_acme',
      ['whsec_dev'],
    ]);
    expect([other!.workspaceId, other!.webhookPath, other!.workspaceApiToken, other!.webhookSecrets]).toEqual([
      'other',
      '/webhooks/other',
      'sbx_full_other',
      [plan.sandbox!.workspaces![1]!.secret],
    ]);
    expect(other!.webhookSecrets).not.toContain('whsec_dev');
    expect(acme!.queuePrefix).not.toBe(other!.queuePrefix);
    expect(other!.workspaceApiUrl).toBe('http://127.0.0.1:4100/api/v1');
  });

  it('writes them as a WORKSPACES_FILE (0600) that another terminal loads into the same workspaces', () => {
    const dir = project();
    const { config } = served(dir, ['acme', 'other', 'ws3']);
    const { file, remove } = writeWorkspacesFile(config, dir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const elsewhere = loadConfig({ WORKSPACES_FILE: file });
    expect(elsewhere.workspaces).toEqual(config.workspaces);
    remove();
    expect(() => readFileSync(file)).toThrow();
  });

  it('takes a whole number of workspaces the sandbox can make, and says what was expected otherwise', () => {
    expect(workspacesFlag(undefined)).toBeUndefined();
    expect(workspacesFlag('2')).toBe(2);
    expect(workspacesFlag('100')).toBe(100);
    for (const bad of ['0', 'x', '', '1.5', '-1', '2x'])
      expect(() => workspacesFlag(bad)).toThrow(`--workspaces: expected a whole number of workspaces from 1 to 100, got "${bad}"`);
    expect(() => workspacesFlag('101')).toThrow('--workspaces: the sandbox makes at most 100 workspaces, got 101');
    expect(() => workspacesFlag('1', 2)).toThrow('from 2 to 100, got "1"');
  });

  it('refuses a kept sandbox that lacks a workspace asked for, before anything starts', async () => {
    const dir = project();
    const home = join(dir, '.switchyard');
    const keptFile = join(home, KEPT_SANDBOX_FILE);
    const sandbox = createSandbox({ stateFile: keptFile });
    const kept = await sandbox.listen(0);
    expect((await sandbox.app.request('/_sandbox/clock', { method: 'POST', body: '{"advance_ms": 1}' })).status).toBe(200);
    await kept.close();
    expect(statSync(keptFile).isFile()).toBe(true);
    // REDIS_URL names no server: nothing may start a redis-server here, and the refusal comes before Redis is used.
    const io = memoryIo({ ...env, SWITCHYARD_HOME: home, REDIS_URL: 'redis://127.0.0.1:1' }, { cwd: dir });
    expect(await devCommand.run(['--keep-sandbox', '--workspaces', '3'], io)).toBe(1);
    expect(io.err()).toBe(
      `switchyard dev: the kept sandbox ${keptFile} has no workspace ws3 (it was kept with fewer workspaces); ` +
        'run with the --workspaces it was kept with, or delete the file for a fresh sandbox\n',
    );
  });

  it('a file a killed dev left behind is not read by the CLI (no dev runs there), and a running dev’s is', () => {
    const dir = project();
    const { config } = served(dir);
    mkdirSync(join(dir, '.switchyard'), { recursive: true });
    writeWorkspacesFile(config, dir);
    const io = memoryIo({}, { cwd: dir });
    expect(cliConfig(io).workspaces).toBeUndefined();
    expect(io.err()).toBe('');
    // The same file while a dev of this project runs (its receiver.json names this live process).
    recordReceiver({ stateDir: '.switchyard', webhookPath: '/webhooks' }, dir, 'dev', 'http://127.0.0.1:1');
    const live = memoryIo({}, { cwd: dir });
    expect(cliConfig(live, 'other').workspaceId).toBe('other');
    expect(live.err()).toContain('using the workspaces of the running switchyard dev');
  });
});
