/**
 * A handler gets its own settings as `ctx.settings` (parsed from the
 * environment), never Switchyard's own secrets, no `ctx.env`, and a client
 * without the rate limiter: checked through the real worker (receiver → queue
 * → worker → handler → sandbox) and through `replay --inline`, with a handler
 * that writes what it sees as a note.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCommand } from '../../../src/cli/replay.js';
import { messageBody } from '../../support/events.js';
import { SANDBOX_TOKEN, sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, TEST_SECRET, waitFor } from '../../support/service.js';
import { memoryIo } from '../../support/io.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/env', import.meta.url));

/** Switchyard's own secrets, each with a value a leak would show. */
const SECRETS = {
  ADMIN_USER: 'admin-user-do-not-leak',
  ADMIN_PASSWORD: 'admin-password-do-not-leak',
  WEBHOOK_SECRETS_FILE: '/run/secrets/webhook-do-not-leak',
  WORKSPACE_API_TOKEN_FILE: '/run/secrets/token-do-not-leak',
  REDIS_PASSWORD: 'redis-password-do-not-leak',
  REDIS_SENTINEL_PASSWORD: 'sentinel-password-do-not-leak',
};

interface Seen {
  settings: Record<string, unknown>;
  keys: string[];
  api: string[];
}

function expectSettingsOnly(body: string, secretValues: string[]): void {
  const seen = JSON.parse(body) as Seen;
  expect(seen.settings).toEqual({ ENV_PROBE_SETTING: 'probe-value', ENV_PROBE_COUNT: 3 });
  expect(seen.keys).toEqual([
    'api',
    'debounced',
    'delivery',
    'log',
    'settings',
    'signal',
    'sleep',
    'sleepUntil',
    'state',
    'step',
    'waitForEvent',
    'workspace',
  ]);
  expect(seen.api).toContain('contacts');
  expect(seen.api).not.toContain('rateLimiter');
  for (const value of secretValues) expect(body).not.toContain(value);
}

describe('ctx.settings through the worker', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS, env: { WEBHOOK_SECRETS: TEST_SECRET, ENV_PROBE_SETTING: 'probe-value', ...SECRETS } });
  });
  afterAll(async () => p?.close());

  it('a handler sees its own settings, parsed, but no environment, no secret and no rate limiter', async () => {
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    expect((await deliver(p.receiverUrl, messageBody('message.received', conv))).status).toBe(202);
    const note = await waitFor(
      async () => (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).find((r) => r.status === 201),
      20_000,
      100,
    );
    expectSettingsOnly((note.body as { body: string }).body, [TEST_SECRET, SANDBOX_TOKEN, ...Object.values(SECRETS)]);
  });
});

describe('ctx.settings through replay --inline', () => {
  let p: Pipeline;
  beforeAll(async () => {
    // Only its sandbox is used: replay --inline runs the handler in this process, without Redis.
    p = await startPipeline({ handlersDir: HANDLERS, only: [] });
  });
  afterAll(async () => p?.close());

  it('the same settings, without Switchyard secrets', async () => {
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    const dir = mkdtempSync(join(tmpdir(), 'sy-env-'));
    writeFileSync(join(dir, 'message.json'), messageBody('message.received', conv));
    const io = memoryIo({
      WORKSPACE_API_URL: p.api.baseUrl,
      WORKSPACE_API_TOKEN: SANDBOX_TOKEN,
      HANDLERS_DIR: HANDLERS,
      WEBHOOK_SECRETS: TEST_SECRET,
      REDIS_URL: 'redis://:redis-url-password@127.0.0.1:1',
      ENV_PROBE_SETTING: 'probe-value',
      ...SECRETS,
    });
    expect(await replayCommand.run([dir, '--inline'], io)).toBe(0);
    expect(io.out()).toMatch(/✓ env-probe completed/);
    const note = (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).find((r) => r.status === 201);
    expectSettingsOnly((note!.body as { body: string }).body, [
      TEST_SECRET,
      SANDBOX_TOKEN,
      'redis-url-password',
      ...Object.values(SECRETS),
    ]);
  });

  it('a missing or bad setting stops the replay before any delivery, naming the handler, the variable and what is expected', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-env-'));
    writeFileSync(join(dir, 'message.json'), messageBody('message.received', 1));
    const before = (await p.requests({ method: 'POST' })).length;
    const base = { WORKSPACE_API_URL: p.api.baseUrl, WORKSPACE_API_TOKEN: SANDBOX_TOKEN, HANDLERS_DIR: HANDLERS };
    await expect(replayCommand.run([dir, '--inline'], memoryIo(base))).rejects.toThrow(
      'handler "env-probe" settings: ENV_PROBE_SETTING is not set: expected string',
    );
    await expect(
      replayCommand.run([dir, '--inline'], memoryIo({ ...base, ENV_PROBE_SETTING: 'x', ENV_PROBE_COUNT: 'many' })),
    ).rejects.toThrow('handler "env-probe" settings: ENV_PROBE_COUNT is invalid: expected number');
    expect((await p.requests({ method: 'POST' })).length).toBe(before);
  });
});
