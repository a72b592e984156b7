/** `switchyard dev`'s plan: which environment the service gets beside the sandbox. */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { devPlan, SANDBOX_TOKEN } from '../../../src/runtime/dev-env.js';

const project = (): string => mkdtempSync(join(tmpdir(), 'sy-devplan-'));

const base = { WEBHOOK_SECRETS: 'whsec_test', PORT: '3100', SANDBOX_PORT: '4100' };

describe('devPlan', () => {
  it('points the handlers at the sandbox with the sandbox token, never a real token left in the shell', () => {
    const plan = devPlan({ ...base, WORKSPACE_API_TOKEN: 'real_secret_token' }, project());
    expect(plan.env['WORKSPACE_API_URL']).toBe('http://127.0.0.1:4100/api/v1');
    expect(plan.env['WORKSPACE_API_TOKEN']).toBe(SANDBOX_TOKEN);
    expect(plan.sandbox).toMatchObject({ port: 4100, token: SANDBOX_TOKEN, webhookUrl: 'http://127.0.0.1:3100/webhooks' });
    expect(plan.notes.join('\n')).toMatch(/WORKSPACE_API_TOKEN is set but WORKSPACE_API_URL is not/);
    expect(plan.notes.join('\n')).not.toContain('real_secret_token');
  });

  it('leaves a real workspace alone: with WORKSPACE_API_URL set there is no sandbox and the token is kept', () => {
    const plan = devPlan(
      { ...base, WORKSPACE_API_URL: 'https://ws.example.test/api/v1', WORKSPACE_API_TOKEN: 'real_secret_token' },
      project(),
    );
    expect(plan.sandbox).toBeUndefined();
    expect(plan.env['WORKSPACE_API_TOKEN']).toBe('real_secret_token');
    expect(plan.notes.join('\n')).not.toContain('real_secret_token');
  });

  it('binds loopback unless HOST is set', () => {
    expect(devPlan(base, project()).env['HOST']).toBe('127.0.0.1');
    expect(devPlan({ ...base, HOST: '0.0.0.0' }, project()).env['HOST']).toBe('0.0.0.0');
  });

  it('says which API it uses: the sandbox, or the real workspace named by WORKSPACE_API_URL', () => {
    expect(devPlan(base, project()).notes.join('\n')).toContain(
      'sandbox workspace API at http://127.0.0.1:4100/api/v1 (token sbx_full_acme)',
    );
    const real = devPlan(
      { ...base, WORKSPACE_API_URL: 'https://ws.example.test/api/v1', WORKSPACE_API_TOKEN: 'real_secret_token' },
      project(),
    ).notes.join('\n');
    expect(real).toContain(
      'workspace API at https://ws.example.test/api/v1 (WORKSPACE_API_URL; token WORKSPACE_API_TOKEN); no sandbox runs',
    );
    expect(real).not.toContain('real_secret_token');
  });

  it('serves the dashboard on loopback with a kept, printed password; off (saying how to enable it) on other interfaces', () => {
    const dir = project();
    const plan = devPlan(base, dir);
    const password = readFileSync(join(dir, '.switchyard', 'admin-password'), 'utf8').trim();
    expect(password).toMatch(/^[0-9a-f]{32}$/);
    expect(statSync(join(dir, '.switchyard', 'admin-password')).mode & 0o777).toBe(0o600);
    expect(plan.env).toMatchObject({ ADMIN_USER: 'dev', ADMIN_PASSWORD: password });
    expect(plan.notes.join('\n')).toContain(
      `dashboard at http://127.0.0.1:3100/admin, deliveries at http://127.0.0.1:3100/admin/deliveries, sleeping and waiting runs at http://127.0.0.1:3100/admin/waits (user dev, password ${password}`,
    );
    expect(devPlan(base, dir).env['ADMIN_PASSWORD']).toBe(password);
    const open = devPlan({ ...base, HOST: '0.0.0.0' }, project());
    expect(open.env['ADMIN_USER']).toBeUndefined();
    expect(open.notes.join('\n')).toContain('dashboard off: HOST 0.0.0.0 is not loopback; set ADMIN_USER and ADMIN_PASSWORD');
    // The operator's own credentials are kept as they are.
    expect(devPlan({ ...base, ADMIN_USER: 'me', ADMIN_PASSWORD: 'pw' }, project()).env).toMatchObject({
      ADMIN_USER: 'me',
      ADMIN_PASSWORD: 'pw',
    });
  });
});

describe('devPlan with --workspaces', () => {
  it('gives each workspace <receiver><WEBHOOK_PATH>/<id>, its sandbox token and, past the first, a kept secret of its own', () => {
    const dir = project();
    const plan = devPlan({ ...base, WEBHOOK_PATH: '/hooks/' }, dir, { workspaces: ['acme', 'other', 'ws3'] });
    const list = plan.sandbox?.workspaces ?? [];
    expect(list.map((w) => [w.id, w.token, w.webhookUrl])).toEqual([
      ['acme', 'sbx_full_acme', 'http://127.0.0.1:3100/hooks/acme'],
      ['other', 'sbx_full_other', 'http://127.0.0.1:3100/hooks/other'],
      ['ws3', 'sbx_full_ws3', 'http://127.0.0.1:3100/hooks/ws3'],
    ]);
    expect(list[0]!.secret).toBeUndefined();
    const kept = readFileSync(join(dir, '.switchyard', 'dev-secret-other'), 'utf8').trim();
    expect(list[1]!.secret).toBe(kept);
    expect(statSync(join(dir, '.switchyard', 'dev-secret-other')).mode & 0o777).toBe(0o600);
    expect(list[2]!.secret).not.toBe(kept);
    // Kept: a second plan in the same project signs with the same secrets.
    expect(devPlan(base, dir, { workspaces: ['acme', 'other', 'ws3'] }).sandbox?.workspaces?.map((w) => w.secret)).toEqual(
      list.map((w) => w.secret),
    );
    expect(plan.notes.join('\n')).toContain('3 of its workspaces served (--workspaces)');
  });

  it('is exactly as before without it: no workspaces in the plan', () => {
    expect(devPlan(base, project()).sandbox?.workspaces).toBeUndefined();
  });

  it('refuses WORKSPACE_API_URL or WORKSPACES_FILE beside it, naming the variable and what to do', () => {
    for (const name of ['WORKSPACE_API_URL', 'WORKSPACES_FILE']) {
      expect(() => devPlan({ ...base, [name]: 'https://ws.example.test/api/v1' }, project(), { workspaces: ['acme', 'other'] })).toThrow(
        `${name}: set together with --workspaces, which serves sandbox workspaces (each its own token, secret and webhook URL); expected one or the other: unset ${name}, or leave out --workspaces`,
      );
    }
  });
});
