import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { eventBody } from '../../support/events.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver } from '../../support/service.js';

describe('switchyard serve (built CLI, over HTTP)', () => {
  const secret = 'e2e-secret-value';
  let proc: CliProcess;
  let url: string;

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/webhooks`;
    proc = runCli(['serve'], {
      WEBHOOK_SECRETS: secret,
      PORT: String(port),
      HOST: '127.0.0.1',
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniquePrefix('e2e'),
      LOG_LEVEL: 'info',
    });
    await proc.waitFor(/receiver listening/);
  });
  afterAll(async () => {
    await proc?.stop();
  });

  it('accepts, deduplicates and refuses exactly as the contract says', async () => {
    const body = eventBody('lead.won');
    expect((await deliver(url, body, secret)).status).toBe(202);
    expect((await deliver(url, body, secret)).status).toBe(200);
    const { sign } = await import('../../../src/events/signature.js');
    const oneByteChanged = await fetch(url, {
      method: 'POST',
      body: body.replace('lead.won', 'lead.wom'),
      headers: { 'x-service-signature': sign(secret, body) },
    });
    expect(oneByteChanged.status).toBe(401);
    const big = 'x'.repeat(1_048_577);
    expect((await deliver(url, big, secret)).status).toBe(413);
    expect((await fetch(url)).status).toBe(405);
    expect((await fetch(url.replace('/webhooks', '/healthz'))).status).toBe(200);
  });

  it('never prints the secret', () => {
    expect(proc.output()).not.toContain(secret);
  });

  it('stops cleanly on SIGTERM', async () => {
    expect(await proc.stop('SIGTERM')).toBe(0);
    expect(proc.output()).toMatch(/stopped/);
  });
});

describe('start-up refusals', () => {
  it('serve and start refuse to run without WEBHOOK_SECRETS and say how to set it', async () => {
    for (const cmd of ['serve', 'start']) {
      const p = runCli([cmd], { WEBHOOK_SECRETS: '' });
      expect(await p.exited).toBe(1);
      expect(p.output()).toMatch(/WEBHOOK_SECRETS: required/);
      expect(p.output()).toMatch(/WEBHOOK_SECRETS=/);
      expect(p.output()).not.toMatch(/\n\s+at /); // no stack trace
    }
  });

  it('reports every configuration problem at once', async () => {
    const p = runCli(['serve'], { PORT: 'x', DEDUPE_TTL: 'forever' });
    expect(await p.exited).toBe(1);
    expect(p.output()).toMatch(/PORT:/);
    expect(p.output()).toMatch(/DEDUPE_TTL:/);
    expect(p.output()).toMatch(/WEBHOOK_SECRETS:/);
  });

  it('one-shot commands report configuration problems the same way (exit 1, every variable named)', async () => {
    const p = runCli(['dlq', 'list'], { REDIS_URL: 'http://nope', DEDUPE_TTL: 'soon' });
    expect(await p.exited).toBe(1);
    expect(p.output()).toMatch(/REDIS_URL:/);
    expect(p.output()).toMatch(/DEDUPE_TTL:/);
  });

  it('unknown commands and flags are usage errors (exit 2)', async () => {
    expect(await runCli(['nope'], {}).exited).toBe(2);
    expect(await runCli(['serve', '--bogus'], { WEBHOOK_SECRETS: 's' }).exited).toBe(2);
  });
});

describe('managed redis-server (no REDIS_URL)', () => {
  it('starts its own redis-server under .switchyard/ and stops it on shutdown', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-managed-'));
    const port = await freePort();
    const p = runCli(
      ['start'],
      { WEBHOOK_SECRETS: secretFor(), PORT: String(port), HOST: '127.0.0.1', SWITCHYARD_HOME: join(dir, '.switchyard'), HANDLERS_DIR: dir },
      dir,
    );
    try {
      const m = await p.waitFor(/"port":(\d+),"dir":"[^"]*redis"/);
      await p.waitFor(/receiver listening/);
      const body = eventBody();
      expect((await deliver(`http://127.0.0.1:${port}/webhooks`, body, secretFor())).status).toBe(202);
      expect(await p.stop()).toBe(0);
      // The managed server is gone with the process.
      const { createConnection } = await import('node:net');
      const refused = await new Promise<boolean>((res) => {
        const s = createConnection({ host: '127.0.0.1', port: Number(m[1]) });
        s.once('connect', () => {
          s.destroy();
          res(false);
        });
        s.once('error', () => res(true));
      });
      expect(refused).toBe(true);
    } finally {
      await p.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function secretFor(): string {
  return 'managed-secret';
}

describe('switchyard work with METRICS_PORT', () => {
  it('serves its own /metrics and /healthz', async () => {
    const port = await freePort();
    const handlersDir = mkdtempSync(join(tmpdir(), 'sy-no-handlers-')); // empty: a missing HANDLERS_DIR stops start-up
    const p = runCli(['work'], {
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniquePrefix('wm'),
      METRICS_PORT: String(port),
      HOST: '127.0.0.1',
      HANDLERS_DIR: handlersDir,
    });
    try {
      await p.waitFor(/metrics listening/);
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toMatch(/switchyard_queue_jobs|switchyard_/);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      rmSync(handlersDir, { recursive: true, force: true });
      expect(await p.stop()).toBe(0);
    }
  });
});
