import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo, Command } from '../../../src/cli/command.js';
import { UsageError } from '../../../src/cli/command.js';
import { serveCommand } from '../../../src/cli/serve.js';
import { startCommand } from '../../../src/cli/start.js';
import { workCommand } from '../../../src/cli/work.js';
import { ConfigError } from '../../../src/config/config.js';
import { freePort } from '../../../src/redis/managed.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { eventBody, messageBody } from '../../support/events.js';
import { memoryIo } from '../../support/io.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { T } from '../../support/sandbox.js';
import { deliver, TEST_SECRET, waitFor } from '../../support/service.js';

// `switchyard start`, `serve` and `work` run as functions in this process (the built
// binary's own tests are test/e2e/cli/serve and dev): each runs until its stop signal
// aborts, then shuts down and returns its exit code.
const NOTES = fileURLToPath(new URL('../../support/handlers/notes', import.meta.url));

let home: string;
const running: { stop: AbortController; exit: Promise<number> }[] = [];
let api: RunningSandbox;

beforeAll(async () => {
  api = await createSandbox().listen(0);
});
afterAll(async () => {
  await api?.close();
});
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.stop.abort();
    await r.exit.catch(() => undefined);
  }
  rmSync(home, { recursive: true, force: true });
});

async function run(command: Command, extra: Record<string, string>) {
  home = mkdtempSync(join(tmpdir(), 'sy-cli-start-'));
  const port = await freePort();
  const env = {
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: uniquePrefix('cli-start'),
    WEBHOOK_SECRETS: TEST_SECRET,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    SWITCHYARD_HOME: join(home, '.switchyard'),
    ...extra,
  };
  // The state directory `dev` (or a managed Redis) makes; with REDIS_URL set, start writes into it if it exists.
  mkdirSync(env.SWITCHYARD_HOME);
  const stop = new AbortController();
  const io: CliIo = { ...memoryIo(env, { cwd: home }), stopSignal: stop.signal };
  const exit = command.run([], io);
  running.push({ stop, exit });
  const url = `http://127.0.0.1:${port}/webhooks`;
  await waitFor(async () => (await fetch(url.replace('/webhooks', '/healthz')).catch(() => null))?.status === 200, 20_000);
  return { url, stop, exit, stateDir: env.SWITCHYARD_HOME };
}

/** The notes the sandbox was asked to create. */
async function notesWritten(): Promise<number> {
  const r = await fetch(`${api.url}/_sandbox/requests?method=POST`);
  const { data } = (await r.json()) as { data: { path: string; status: number }[] };
  return data.filter((q) => /\/conversations\/\d+\/notes$/.test(q.path) && q.status < 300).length;
}

describe('switchyard start (receiver and worker in one process)', () => {
  it('receives a signed delivery, runs its handler against the API, tells other terminals where it receives, and exits 0 when stopped', async () => {
    const before = await notesWritten();
    const { url, stop, exit, stateDir } = await run(startCommand, {
      WORKSPACE_API_URL: api.baseUrl,
      WORKSPACE_API_TOKEN: T.full,
      HANDLERS_DIR: NOTES,
    });
    // `send` and `replay` in another terminal of the project find it here.
    const record = JSON.parse(readFileSync(join(stateDir, 'receiver.json'), 'utf8')) as { pid: number; command: string; url: string };
    expect(record).toMatchObject({ pid: process.pid, command: 'start', url });

    // An inbound message in a conversation of the sandbox's seed: the handler notes it there.
    const conversations = await fetch(`${api.baseUrl}/conversations`, { headers: { authorization: `Bearer ${T.full}` } });
    const conv = ((await conversations.json()) as { data: { id: number }[] }).data[0]!.id;
    const body = messageBody('message.received', conv);
    expect((await deliver(url, body)).status).toBe(202);
    expect((await deliver(url, body)).status).toBe(200);
    await waitFor(async () => (await notesWritten()) === before + 1, 20_000);

    stop.abort();
    expect(await exit).toBe(0);
    expect(existsSync(join(stateDir, 'receiver.json'))).toBe(false);
    await expect(fetch(url, { method: 'POST', body })).rejects.toThrow();
  });
});

describe('switchyard serve (receiver only)', () => {
  it('accepts and deduplicates, records no receiver (only dev and start do), and exits 0 when stopped', async () => {
    const { url, stop, exit, stateDir } = await run(serveCommand, {});
    const body = eventBody('lead.won');
    expect((await deliver(url, body)).status).toBe(202);
    expect((await deliver(url, body)).status).toBe(200);
    expect((await deliver(url, body, 'wrong-secret')).status).toBe(401);
    expect(existsSync(join(stateDir, 'receiver.json'))).toBe(false);
    stop.abort();
    expect(await exit).toBe(0);
  });
});

describe('refused before anything starts', () => {
  const io = (env: Record<string, string>) => memoryIo({ REDIS_URL: testRedisUrl(), LOG_LEVEL: 'silent', ...env });

  it('serve and start without WEBHOOK_SECRETS; work and start with an API URL but no token, or a token sent in clear: a configuration error naming the variable', async () => {
    const api = { WORKSPACE_API_URL: 'https://workspace.example.com/api/v1' };
    await expect(serveCommand.run([], io({}))).rejects.toThrow(ConfigError);
    await expect(serveCommand.run([], io({}))).rejects.toThrow(/WEBHOOK_SECRETS: required to verify deliveries and missing/);
    await expect(startCommand.run([], io({ ...api, WORKSPACE_API_TOKEN: 't' }))).rejects.toThrow(/WEBHOOK_SECRETS: required/);
    await expect(workCommand.run([], io(api))).rejects.toThrow(/WORKSPACE_API_TOKEN: required when WORKSPACE_API_URL is set/);
    await expect(startCommand.run([], io({ ...api, WEBHOOK_SECRETS: TEST_SECRET }))).rejects.toThrow(/WORKSPACE_API_TOKEN: required/);
    await expect(
      workCommand.run([], io({ WORKSPACE_API_URL: 'http://workspace.example.com/api/v1', WORKSPACE_API_TOKEN: 't' })),
    ).rejects.toThrow(/WORKSPACE_API_URL: expected https .*, got http:\/\/workspace.example.com/);
  });

  it('an argument the commands do not take', async () => {
    for (const command of [serveCommand, startCommand, workCommand])
      await expect(command.run(['--port', '1'], io({ WEBHOOK_SECRETS: TEST_SECRET }))).rejects.toThrow(UsageError);
  });
});
