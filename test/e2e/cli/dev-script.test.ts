import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { assertBuilt, runCli } from '../../support/cli.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** IPv4 addresses with a listening TCP socket on `port`, from /proc/net/tcp (Linux). */
function listeningAddresses(port: number): string[] {
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .flatMap((line) => {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A' || !local) return [];
      const [hexIp, hexPort] = local.split(':') as [string, string];
      if (parseInt(hexPort, 16) !== port) return [];
      return [
        (hexIp.match(/../g) as string[])
          .reverse()
          .map((b) => parseInt(b, 16))
          .join('.'),
      ];
    });
}

interface Dev {
  child: ChildProcess;
  output(): string;
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
}

/** `npm run dev` as a user runs it (minus install-and-build, done by the suite), in its own process group. */
function startDev(env: Record<string, string>): Dev {
  assertBuilt();
  const child = spawn('sh', ['scripts/dev.sh'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', SKIP_SETUP: '1', LOG_LEVEL: 'info', ...env },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return {
    child,
    output: () => out,
    waitFor: async (re, ms = 20_000) => {
      const end = Date.now() + ms;
      for (;;) {
        const m = out.match(re);
        if (m) return m;
        if (child.exitCode !== null || Date.now() > end) throw new Error(`no ${re} in the output of npm run dev:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

async function stopDev(dev: Dev): Promise<void> {
  if (dev.child.exitCode !== null || dev.child.pid === undefined) return;
  const exited = new Promise((r) => dev.child.once('exit', r));
  process.kill(-dev.child.pid, 'SIGTERM');
  const t = setTimeout(() => {
    try {
      process.kill(-(dev.child.pid as number), 'SIGKILL');
    } catch {
      /* gone */
    }
  }, 15_000);
  await exited;
  clearTimeout(t);
}

describe('npm run dev (scripts/dev.sh)', () => {
  const running: Dev[] = [];
  const homes: string[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map(stopDev));
    for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
  });

  const boot = async (env: Record<string, string> = {}) => {
    const home = mkdtempSync(join(tmpdir(), 'sy-dev-'));
    homes.push(home);
    const port = await freePort();
    const dev = startDev({ PORT: String(port), SANDBOX_PORT: String(await freePort()), SWITCHYARD_HOME: home, ...env });
    running.push(dev);
    const [line] = await dev.waitFor(/^\{.*"msg":"receiver listening".*\}$/m);
    return { dev, port, home, listening: JSON.parse(line) as { address: string; url: string } };
  };

  it('binds loopback unless HOST is set, and logs the address it is bound to', async () => {
    const { port, listening } = await boot();
    expect(listeningAddresses(port)).toEqual(['127.0.0.1']);
    expect(listening.address).toBe(`127.0.0.1:${port}`);
    expect(listening.url).toBe(`http://127.0.0.1:${port}/webhooks`);
  }, 40_000);

  it('with HOST=0.0.0.0 it binds every interface and the log says so', async () => {
    const { port, listening } = await boot({ HOST: '0.0.0.0' });
    expect(listeningAddresses(port)).toEqual(['0.0.0.0']);
    expect(listening.address).toBe(`0.0.0.0:${port}`);
  }, 40_000);

  it('a second terminal needs no set-up: send finds the dev secret and the receiver, dlq finds the managed Redis', async () => {
    const { dev, port, home } = await boot();
    const env = { PORT: String(port), SWITCHYARD_HOME: home };
    const send = runCli(['send', 'conversation.closed', '--set', 'data.contact_id=36'], env, ROOT);
    expect(await send.exited).toBe(0);
    expect(send.output()).toMatch(/note: WEBHOOK_SECRETS is unset; signing with the development secret of `npm run dev`/);
    const [, id] = send.output().match(/accepted conversation\.closed (evt_replay_\w+) \(HTTP 202\)/) ?? [];
    expect(id).toBeDefined();
    // The README's example must succeed, not dead-letter: wait for the recipe it triggers to finish.
    const done = new RegExp(`^(?=.*"delivery":"${id}")(?=.*"handler":"follow-up-task")(?=.*"outcome":"completed").*$`, 'm');
    await dev.waitFor(done, 30_000);
    const dlq = runCli(['dlq', 'list'], env, ROOT);
    expect(await dlq.exited).toBe(0);
    expect(dlq.output().trim()).toBe('no dead-lettered jobs match');
  }, 40_000);
});
