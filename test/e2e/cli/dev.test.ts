import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../../support/dev-process.js';
import { messageBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The handler of the project under test: one internal note per inbound message, `<version>: <message body>`. */
const handler = (version: string): string => `import { defineHandler } from 'switchyard';
${version.startsWith('./') ? `import { VERSION } from '${version}';` : `const VERSION = '${version}';`}

export default defineHandler({
  id: 'note-version',
  on: ['message.received'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.conversation_id, { body: \`\${VERSION}: \${event.data.body}\` });
  },
});
`;

type Dev = ServiceProcess;
const startDev = (cwd: string, env: Record<string, string>): Dev => startServiceProcess('dev', cwd, env);
const stopDev = stopServiceProcess;

describe('switchyard dev (built CLI, in a project of its own)', () => {
  let project: string;
  let dev: Dev | undefined;
  let redis: Redis;
  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'sy-dev-e2e-'));
    mkdirSync(join(project, 'node_modules'));
    mkdirSync(join(project, 'handlers', 'lib'), { recursive: true });
    symlinkSync(ROOT, join(project, 'node_modules', 'switchyard'), 'dir');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-handlers', private: true, type: 'module' }));
    redis = new Redis(testRedisUrl());
  });
  afterEach(async () => {
    if (dev) await stopDev(dev);
    dev = undefined;
    redis.disconnect();
    rmSync(project, { recursive: true, force: true });
  });

  it('reloads a saved handler without a restart, keeps sandbox state and the queue, and survives a syntax error', async () => {
    const file = join(project, 'handlers', 'note-version.ts');
    writeFileSync(file, handler('v1'));
    const [port, sandboxPort, prefix] = [await freePort(), await freePort(), uniquePrefix('dev')];
    const home = join(project, '.sy');
    dev = startDev(project, {
      PORT: String(port),
      SANDBOX_PORT: String(sandboxPort),
      SWITCHYARD_HOME: home,
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: prefix,
    });
    await dev.waitFor(/"msg":"receiver listening"/);
    const d = dev;
    const sandbox = `http://127.0.0.1:${sandboxPort}`;
    const receiver = `http://127.0.0.1:${port}/webhooks`;
    const secret = readFileSync(join(home, 'dev-secret'), 'utf8').trim();
    expect(d.output()).toContain(`dev: WEBHOOK_SECRETS=${secret}`);
    const workspaces = (await (await fetch(`${sandbox}/_sandbox/workspaces`)).json()) as { data: { conversation_ids: number[] }[] };
    const conversation = workspaces.data[0]!.conversation_ids[0]!;

    const envelope = (text: string): string => messageBody('message.received', conversation, text);
    /** A customer writes through the sandbox: it emits message.received, signed, to the receiver. */
    const inbound = async (text: string): Promise<void> => {
      const r = await fetch(`${sandbox}/_sandbox/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ conversation_id: conversation, body: text }),
      });
      expect(r.status).toBeLessThan(300);
    };
    /** The note bodies the handlers wrote, from the sandbox's request log (hooks are not rate limited). */
    const notes = async (): Promise<string[]> => {
      const r = (await (await fetch(`${sandbox}/_sandbox/requests?method=POST&path=/conversations/*/notes`)).json()) as {
        data: { body: { body: string } | null; status: number }[];
      };
      return r.data.filter((q) => q.status === 201).map((q) => q.body?.body ?? '');
    };
    const noted = (body: string) => waitFor(async () => (await notes()).includes(body), 15_000);
    const completed = () => redis.zcard(`${prefix}:handlers:completed`);
    const RELOADED = /dev: reloaded handlers: /;
    const KEPT = /dev: keeping the previous handlers running/;
    /**
     * Saves files and waits for the next line matching `re` (a reload, or the previous version kept). `atomic`
     * saves as many editors do: a temporary file renamed over the old one.
     */
    const saveAndWait = async (files: Record<string, string>, re: RegExp, atomic = false): Promise<void> => {
      const before = d.count(re);
      for (const [name, text] of Object.entries(files)) {
        const path = join(project, 'handlers', name);
        if (!atomic) writeFileSync(path, text);
        else {
          writeFileSync(join(path, '..', `.${basename(path)}.tmp`), text);
          renameSync(join(path, '..', `.${basename(path)}.tmp`), path);
        }
      }
      await d.waitFor(re, before + 1);
    };

    // v1 handles a signed delivery.
    const first = envelope('one');
    expect((await deliver(receiver, first, secret)).status).toBe(202);
    await noted('v1: one');

    // Save v2 (atomically, as vim or JetBrains do; later saves write in place to the new file): reloaded in place;
    // the sandbox emits the next event and v2 handles it.
    await saveAndWait({ 'note-version.ts': handler('v2') }, RELOADED, true);
    expect(d.output()).toMatch(/dev: reloaded handlers: note-version \(\d+ ms\)\n/);
    await inbound('two');
    await noted('v2: two');
    // Sandbox state kept: the conversation holds both notes.
    const messages = (await (
      await fetch(`${sandbox}/api/v1/conversations/${conversation}/messages`, { headers: { authorization: 'Bearer sbx_full_acme' } })
    ).json()) as { data: { type: string; body: string }[] };
    expect(messages.data.filter((m) => m.type === 'note').map((m) => m.body)).toEqual(expect.arrayContaining(['v1: one', 'v2: two']));
    // The queue and Redis are the same: v1's job is still among the completed (marked so just after its note is
    // written), the first delivery is still a duplicate, and the worker was not restarted.
    await waitFor(async () => (await completed()) === 2);
    expect((await deliver(receiver, first, secret)).status).toBe(200);
    expect(d.output().match(/"msg":"worker started"/g)).toHaveLength(1);

    // A syntax error: file:line:column and a code frame; v2 keeps handling deliveries.
    await saveAndWait({ 'note-version.ts': handler('v2').replace('ctx.api.notes.create(', 'ctx.api.notes.create((') }, KEPT);
    const out = d.output();
    expect(out).toMatch(/handlers\/note-version\.ts:9:\d+: syntax error: /);
    expect(out).toMatch(/^> +9 \| +await ctx\.api\.notes\.create\(\(/m);
    expect(out).toMatch(/^ +\| +\^$/m);
    expect((await deliver(receiver, envelope('three'), secret)).status).toBe(202);
    await noted('v2: three');

    // Fixed, now reading its version from a helper module: reloaded.
    await saveAndWait(
      { 'lib/version.ts': `export const VERSION: string = 'v3';\n`, 'note-version.ts': handler('./lib/version.js') },
      RELOADED,
    );
    await inbound('four');
    await noted('v3: four');
    // A syntax error in the helper is shown in the helper, with the handler that imports it.
    await saveAndWait({ 'lib/version.ts': `export const VERSION: string = 'v4' +;\n` }, KEPT);
    expect(d.output()).toMatch(
      /dev: handlers\/lib\/version\.ts:1:\d+: syntax error: Unexpected ";"\n> 1 \| export const VERSION[^\n]*\n +\| +\^\n(?: +2 \| *\n)?\(imported by handlers\/note-version\.ts\)\n/,
    );
    // The helper fixed (v4, its fresh contents are used) and a module added: both in the next version.
    await saveAndWait(
      {
        'lib/version.ts': `export const VERSION: string = 'v4';\n`,
        'other.ts': handler('other').replace("'note-version'", "'other'").replace("'message.received'", "'lead.won'"),
      },
      /dev: reloaded handlers: note-version, other \(\d+ ms\); added other\n/,
    );
    await inbound('five');
    await noted('v4: five');
    await waitFor(async () => (await completed()) === 5);

    // Ctrl-C stops everything: no sandbox is left behind.
    expect(await stopDev(d)).toBe(0);
    await expect(fetch(`${sandbox}/_sandbox/workspaces`)).rejects.toThrow();
  }, 90_000);
});
