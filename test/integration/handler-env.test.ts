/**
 * `ctx.env` holds a handler's settings, never Switchyard's own secrets: checked
 * through the real worker (receiver → queue → worker → handler → sandbox) and
 * through `replay --inline`, with a handler that writes what it sees as a note.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCommand } from '../../src/cli/replay.js';
import { messageReceived } from '../support/deliveries.js';
import { SANDBOX_TOKEN, sandboxCall, startPipeline, type Pipeline } from '../support/pipeline.js';
import { deliver, TEST_SECRET, waitFor } from '../support/service.js';
import { memoryIo } from '../cli/io.js';

const HANDLERS = fileURLToPath(new URL('../handlers-env', import.meta.url));

/** Switchyard's own secrets, each with a value a leak would show. */
const SECRETS = {
  ADMIN_USER: 'admin-user-do-not-leak',
  ADMIN_PASSWORD: 'admin-password-do-not-leak',
  WEBHOOK_SECRETS_FILE: '/run/secrets/webhook-do-not-leak',
  WORKSPACE_API_TOKEN_FILE: '/run/secrets/token-do-not-leak',
  REDIS_PASSWORD: 'redis-password-do-not-leak',
  REDIS_SENTINEL_PASSWORD: 'sentinel-password-do-not-leak',
};
const HIDDEN = ['WEBHOOK_SECRETS', 'WORKSPACE_API_TOKEN', 'REDIS_URL', ...Object.keys(SECRETS)];

interface Seen { setting: string | null; names: string[]; values: string[] }

function expectSettingsOnly(seen: Seen, secretValues: string[]): void {
  expect(seen.setting).toBe('probe-value');
  expect(seen.names).toContain('ENV_PROBE_SETTING');
  expect(seen.names).toContain('WORKSPACE_API_URL'); // configuration that is not a secret stays
  for (const name of HIDDEN) expect(seen.names).not.toContain(name);
  for (const value of secretValues) expect(seen.values.join('\n')).not.toContain(value);
}

describe('ctx.env through the worker', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS, env: { WEBHOOK_SECRETS: TEST_SECRET, ENV_PROBE_SETTING: 'probe-value', ...SECRETS } });
  });
  afterAll(async () => p?.close());

  it('a handler sees its own setting but not WEBHOOK_SECRETS, WORKSPACE_API_TOKEN, the admin login or Redis credentials', async () => {
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    expect((await deliver(p.receiverUrl, messageReceived(conv))).status).toBe(202);
    const note = await waitFor(async () => (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).find((r) => r.status === 201), 20_000, 100);
    const seen = JSON.parse((note.body as { body: string }).body) as Seen;
    expectSettingsOnly(seen, [TEST_SECRET, SANDBOX_TOKEN, ...Object.values(SECRETS)]);
  });
});

describe('ctx.env through replay --inline', () => {
  let p: Pipeline;
  beforeAll(async () => {
    // Only its sandbox is used: replay --inline runs the handler in this process, without Redis.
    p = await startPipeline({ handlersDir: HANDLERS, only: [] });
  });
  afterAll(async () => p?.close());

  it('the same handler environment, without Switchyard secrets', async () => {
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    const dir = mkdtempSync(join(tmpdir(), 'sy-env-'));
    writeFileSync(join(dir, 'message.json'), messageReceived(conv));
    const io = memoryIo({
      WORKSPACE_API_URL: p.api.baseUrl, WORKSPACE_API_TOKEN: SANDBOX_TOKEN, HANDLERS_DIR: HANDLERS, WEBHOOK_SECRETS: TEST_SECRET,
      REDIS_URL: 'redis://:redis-url-password@127.0.0.1:1', ENV_PROBE_SETTING: 'probe-value', ...SECRETS,
    });
    expect(await replayCommand.run([dir, '--inline'], io)).toBe(0);
    expect(io.out()).toMatch(/✓ env-probe completed/);
    const note = (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` })).find((r) => r.status === 201);
    const seen = JSON.parse((note!.body as { body: string }).body) as Seen;
    expectSettingsOnly(seen, [TEST_SECRET, SANDBOX_TOKEN, 'redis-url-password', ...Object.values(SECRETS)]);
  });
});
