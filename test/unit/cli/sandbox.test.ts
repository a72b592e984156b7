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

  it('throws UsageError for bad arguments', async () => {
    const stop = new AbortController().signal;
    await expect(sandboxCommand.run(['--webhook-url', 'http://127.0.0.1:3000/webhooks'], io(stop))).rejects.toBeInstanceOf(UsageError);
    await expect(sandboxCommand.run(['--webhook-url', 'ftp://127.0.0.1/hooks', '--secret', 's'], io(stop))).rejects.toThrow(
      /--webhook-url: expected an http\(s\) URL/,
    );
    await expect(sandboxCommand.run(['--port', 'abc'], io(stop))).rejects.toBeInstanceOf(UsageError);
    await expect(sandboxCommand.run(['--seed', '/nonexistent.json'], io(stop))).rejects.toBeInstanceOf(UsageError);
    await expect(sandboxCommand.run(['--bogus'], io(stop))).rejects.toBeInstanceOf(UsageError);
  });
});
