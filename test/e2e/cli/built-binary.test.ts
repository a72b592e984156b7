import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';

/** The built binary, as users run it (npm run build first). */
describe('switchyard CLI (built binary)', () => {
  it.each(['replay', 'send', 'sign', 'events', 'handlers', 'dlq'])('%s --help exits 0 with an example', async (cmd) => {
    const p = runCli([cmd, '--help'], {});
    expect(await p.exited).toBe(0);
    expect(p.output()).toMatch(/^Usage: switchyard /);
    expect(p.output()).toMatch(/Examples?:/);
  });

  it('top-level help lists the new commands', async () => {
    const p = runCli(['--help'], {});
    expect(await p.exited).toBe(0);
    for (const c of ['replay', 'send', 'sign', 'events', 'handlers', 'dlq']) expect(p.output()).toMatch(new RegExp(`\\n  ${c} `));
  });

  it('a bad flag exits 2 with what was expected and the usage', async () => {
    const p = runCli(['replay', 'fixtures', '--bogus'], {});
    expect(await p.exited).toBe(2);
    expect(p.output()).toMatch(/switchyard replay: Unknown option '--bogus'/);
    expect(p.output()).toContain('Usage: switchyard replay');
    const q = runCli(['send', 'lead.wun'], {});
    expect(await q.exited).toBe(2);
    expect(q.output()).toMatch(/did you mean "lead.won"/);
  });

  it('sign reads stdin-less files and events prints names (exit 0); a failed replay exits 1', async () => {
    const s = runCli(['sign', 'fixtures/README.md', '--secret', 'x', '--value'], {}, process.cwd());
    expect(await s.exited).toBe(0);
    expect(s.output()).toMatch(/^sha256=[0-9a-f]{64}\n$/);
    const e = runCli(['events', '--names'], {});
    expect(await e.exited).toBe(0);
    expect(e.output().split('\n')).toContain('lead.won');
    const r = runCli(['replay', 'fixtures/lead.won.json', '--secret', 'x', '--to', 'http://127.0.0.1:1/webhooks'], {}, process.cwd());
    expect(await r.exited).toBe(1);
    expect(r.output()).toMatch(/1 failed/);
  });

  it('reconcile with no Redis to use says what is missing (exit 1), without the usage text', async () => {
    const p = runCli(['reconcile', '--since', '10m'], {
      WORKSPACE_API_URL: 'http://127.0.0.1:1/api/v1',
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
    });
    expect(await p.exited).toBe(1);
    expect(p.output()).toMatch(
      /^switchyard reconcile: reconcile needs REDIS_URL .* or a running `npm run dev` \/ `switchyard start` with its managed Redis\n$/,
    );
    expect(p.output()).not.toContain('Usage:');
  });

  it('a deployment of two workspaces: a tool without --workspace exits 2 listing them; a broken WORKSPACES_FILE exits 1, quoting none of it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-bin-ws-'));
    const file = join(dir, 'workspaces.json');
    const entry = (id: string) => ({ id, apiUrl: 'https://api.example.com/api/v1', token: `tok_${id}_SECRET`, secrets: [`whsec_${id}`] });
    writeFileSync(file, JSON.stringify({ workspaces: [entry('acme'), entry('beta')] }));
    const p = runCli(['deliveries'], { WORKSPACES_FILE: file, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(await p.exited).toBe(2);
    expect(p.output()).toMatch(
      /^switchyard deliveries: this deployment serves 2 workspaces \(acme, beta\): say which with --workspace <id>\n/,
    );
    expect(p.output()).toContain('Usage: switchyard deliveries');
    const q = runCli(['dlq', 'list', '--workspace', 'acne'], { WORKSPACES_FILE: file, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(await q.exited).toBe(2);
    expect(q.output()).toMatch(/--workspace acne: no such workspace in .* \(did you mean acme\?\); expected one of acme, beta/);
    writeFileSync(file, '{"workspaces": [{"id": "acme", "token": tok_acme_SECRET}]}');
    const r = runCli(['deliveries', '--workspace', 'acme'], { WORKSPACES_FILE: file });
    expect(await r.exited).toBe(1);
    expect(r.output()).toMatch(/WORKSPACES_FILE: ".*" is not valid JSON \(a syntax error/);
    expect(r.output()).not.toContain('tok_acme_SECRET');
    expect(r.output()).not.toMatch(/\n\s+at /);
  });

  it.each(['start', 'work', 'dev'])('%s with WORKSPACE_API_URL and no token refuses to start, naming WORKSPACE_API_TOKEN', async (cmd) => {
    const p = runCli([cmd], { WEBHOOK_SECRETS: 'x', WORKSPACE_API_URL: 'https://api.example.com/v1', REDIS_URL: 'redis://127.0.0.1:1' });
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('WORKSPACE_API_TOKEN: required when WORKSPACE_API_URL is set, and missing');
    expect(p.output()).not.toMatch(/\n\s+at /);
  });
});
