import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { UsageError, type CliIo } from '../../../src/cli/command.js';
import { sandboxCommand } from '../../../src/cli/sandbox.js';

function io(stop: AbortSignal, cwd = process.cwd()): CliIo & { out: () => string } {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c: Buffer) => {
    text += c.toString();
  });
  return { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {}, cwd, stopSignal: stop, out: () => text };
}

describe('switchyard sandbox', () => {
  it('prints the base URL and the tokens, serves with the fixed --token, and stops on the signal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sbx-seed-'));
    writeFileSync(join(dir, 'seed.json'), JSON.stringify({ contacts: [{ name: 'From File', email: 'file@example.com' }] }));
    const ac = new AbortController();
    const cli = io(ac.signal, dir);
    const run = sandboxCommand.run(['--port', '0', '--token', 'script-token', '--seed', 'seed.json'], cli);
    const base = await new Promise<string>((resolve) => {
      const poll = setInterval(() => {
        const m = /Base URL: (\S+)/.exec(cli.out());
        if (m && cli.out().includes('Hooks:')) {
          clearInterval(poll);
          resolve(m[1]!);
        }
      }, 10);
    });
    expect(cli.out()).toMatch(/full\s+script-token/);
    expect(cli.out()).toMatch(/read-only\s+sbx_read_acme/);
    expect(cli.out()).toContain('contacts:read');
    const res = await fetch(`${base}/contacts?email=file@example.com`, { headers: { Authorization: 'Bearer script-token' } });
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(1);
    ac.abort();
    expect(await run).toBe(0);
    await expect(fetch(`${base}/me`)).rejects.toThrow();
  });

  it('--workspaces N: N workspaces, each its own token, and with --webhook-url its own URL/<key> and secret S-<key>', async () => {
    const ac = new AbortController();
    const cli = io(ac.signal);
    const run = sandboxCommand.run(
      ['--port', '0', '--workspaces', '3', '--webhook-url', 'http://127.0.0.1:9/webhooks/', '--secret', 'whsec_x'],
      cli,
    );
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (cli.out().includes('Hooks:')) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    });
    const out = cli.out();
    expect(out).toContain('Workspaces: 3 (hooks take "workspace": <key or id>)');
    expect(out).toMatch(
      / {2}acme {3}Acme \(workspace \d+\): events to http:\/\/127\.0\.0\.1:9\/webhooks\/acme, signed with whsec_x-acme\n/,
    );
    expect(out).toMatch(
      / {2}other {2}Other Co \(workspace \d+\): events to http:\/\/127\.0\.0\.1:9\/webhooks\/other, signed with whsec_x-other\n/,
    );
    expect(out).toMatch(
      / {2}ws3 {4}Workspace 3 \(workspace \d+\): events to http:\/\/127\.0\.0\.1:9\/webhooks\/ws3, signed with whsec_x-ws3\n/,
    );
    expect(out).toMatch(/ws3-full\s+sbx_full_ws3/);
    const hooks = new URL('/_sandbox/webhooks', /Sandbox listening on (\S+)/.exec(out)![1]);
    const targets = ((await (await fetch(hooks)).json()) as { data: { workspace: string; url: string }[] }).data;
    expect(targets.map((t) => [t.workspace, t.url])).toEqual([
      ['acme', 'http://127.0.0.1:9/webhooks/acme'],
      ['other', 'http://127.0.0.1:9/webhooks/other'],
      ['ws3', 'http://127.0.0.1:9/webhooks/ws3'],
    ]);
    ac.abort();
    expect(await run).toBe(0);
  });

  it('throws UsageError for bad arguments', async () => {
    const stop = new AbortController().signal;
    await expect(sandboxCommand.run(['--webhook-url', 'http://127.0.0.1:3000/webhooks'], io(stop))).rejects.toBeInstanceOf(UsageError);
    await expect(sandboxCommand.run(['--webhook-url', 'ftp://127.0.0.1/hooks', '--secret', 's'], io(stop))).rejects.toThrow(
      /--webhook-url: expected an http\(s\) URL/,
    );
    await expect(sandboxCommand.run(['--port', 'abc'], io(stop))).rejects.toBeInstanceOf(UsageError);
    await expect(sandboxCommand.run(['--seed', '/nonexistent.json'], io(stop))).rejects.toBeInstanceOf(UsageError);
    await expect(sandboxCommand.run(['--bogus'], io(stop))).rejects.toBeInstanceOf(UsageError);
    await expect(sandboxCommand.run(['--workspaces', '1'], io(stop))).rejects.toThrow(
      '--workspaces: expected a whole number of workspaces from 2 to 100, got "1"',
    );
    await expect(sandboxCommand.run(['--workspaces', '101'], io(stop))).rejects.toThrow('at most 100 workspaces, got 101');
  });
});
