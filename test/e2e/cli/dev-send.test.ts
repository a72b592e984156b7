import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { BIN } from '../../support/cli.js';
import { startServiceProcess, stopServiceProcess, userProject, type ServiceProcess } from '../../support/dev-process.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

/** Runs the built CLI to its end in `cwd` with only PATH, HOME and `env`. */
function cli(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('close', (code) => res({ code, out, err }));
  });
}

// With `dev` on a port of its own, `send` in another terminal of the project (no PORT there) delivers to that
// dev, signed with its secret: it used to post to :3000 (ECONNREFUSED). An explicit PORT or --to still wins.
describe('send next to a running dev (built CLI, dev on an ephemeral port)', () => {
  let project: string;
  let dev: ServiceProcess | undefined;
  let port: number;
  const home = () => join(project, '.switchyard');

  beforeAll(async () => {
    project = userProject('dev-send', {});
    [port] = [await freePort()];
    dev = startServiceProcess('dev', project, {
      PORT: String(port),
      SANDBOX_PORT: String(await freePort()),
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniquePrefix('devsend'),
    });
    await dev.waitFor(/"msg":"receiver listening"/);
  });
  afterAll(async () => {
    if (dev) await stopServiceProcess(dev);
    rmSync(project, { recursive: true, force: true });
  });

  it('send without PORT goes to the running dev, signed with its development secret', async () => {
    const r = await cli(['send', 'conversation.closed', '--set', 'data.contact_id=36'], project, {});
    expect(r.err).toContain(
      `note: delivering to the running switchyard dev here (pid ${dev!.child.pid}) at http://127.0.0.1:${port}/webhooks`,
    );
    expect(r.out).toMatch(/^accepted conversation\.closed \S+ \(HTTP 202\)\n$/);
    expect(r.code).toBe(0);
  });

  it('an explicit PORT or --to wins over the running dev', async () => {
    const elsewhere = await freePort();
    const byPort = await cli(['send', 'conversation.closed'], project, { PORT: String(elsewhere) });
    expect(byPort.err).not.toContain('running switchyard dev');
    expect(`${byPort.out}${byPort.err}`).toContain(`127.0.0.1:${elsewhere}`);
    expect(byPort.code).toBe(1);
    const byTo = await cli(['send', 'conversation.closed', '--to', `http://127.0.0.1:${elsewhere}/webhooks`], project, {});
    expect(byTo.err).not.toContain('running switchyard dev');
    expect(byTo.code).toBe(1);
  });

  it('the record goes when dev stops', async () => {
    expect(existsSync(join(home(), 'receiver.json'))).toBe(true);
    expect(await stopServiceProcess(dev!)).toBe(0);
    dev = undefined;
    expect(existsSync(join(home(), 'receiver.json'))).toBe(false);
  });
});
