/**
 * Handler code runs in the worker's process: Switchyard's own secrets must not
 * be readable there through `process.env` either (a handler's `settings` cannot
 * name them), in `start`/`work` and in `replay --inline`. The handler's own
 * settings stay, and reach it as `ctx.settings`.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { eventBody } from '../../support/events.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, TEST_SECRET } from '../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/process-env', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../../../fixtures/message.received.json', import.meta.url));

/** The probe handler's log line: which env names it could see, and its own setting. */
const probeOf = (line: string) => JSON.parse(line) as { present: string; setting: string };

describe("Switchyard's secrets are gone from the handlers' process.env", () => {
  const procs: CliProcess[] = [];
  afterEach(async () => {
    await Promise.allSettled(procs.splice(0).map((p) => p.stop('SIGKILL')));
  });

  it('in start (receiver + worker)', async () => {
    const port = await freePort();
    const proc = runCli(['start'], {
      WEBHOOK_SECRETS: TEST_SECRET,
      WORKSPACE_API_TOKEN: 'tok-never-seen',
      ADMIN_USER: 'admin',
      ADMIN_PASSWORD: 'admin-pw-never-seen',
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniquePrefix('penv'),
      PORT: String(port),
      HOST: '127.0.0.1',
      HANDLERS_DIR: HANDLERS,
      PROBE_OWN_SETTING: 'kept',
      LOG_LEVEL: 'warn',
    });
    procs.push(proc);
    for (let i = 0; i < 100 && (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.status !== 200; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect((await deliver(`http://127.0.0.1:${port}/webhooks`, eventBody('message.received'))).status).toBe(202);
    const [line] = await proc.waitFor(/^.*"msg":"process-env-probe".*$/m, 20_000);
    expect(probeOf(line).present).toBe('PROBE_OWN_SETTING');
    expect(probeOf(line).setting).toBe('kept');
  });

  it('in replay --inline', async () => {
    const proc = runCli(['replay', FIXTURE, '--inline'], {
      WEBHOOK_SECRETS: 'whsec-never-seen',
      WORKSPACE_API_TOKEN: 'tok-never-seen',
      ADMIN_USER: 'admin',
      ADMIN_PASSWORD: 'pw',
      REDIS_URL: 'redis://:pw@127.0.0.1:1',
      HANDLERS_DIR: HANDLERS,
      PROBE_OWN_SETTING: 'kept',
      LOG_LEVEL: 'warn',
    });
    procs.push(proc);
    expect(await proc.exited).toBe(0);
    const line = proc
      .output()
      .split('\n')
      .find((l) => l.includes('"msg":"process-env-probe"'));
    expect(line, proc.output()).toBeDefined();
    expect(probeOf(line as string).present).toBe('PROBE_OWN_SETTING');
    expect(probeOf(line as string).setting).toBe('kept');
  });
});
