import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { BIN } from '../../support/cli.js';
import { startServiceProcess, stopServiceProcess, userProject, type ServiceProcess } from '../../support/dev-process.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { waitFor } from '../../support/wait.js';

/** The project's handler: an internal note `re: <body>` on the conversation of each inbound message, in the event's workspace. */
const REPLY = `import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'reply',
  on: ['message.received'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.conversation_id, { body: \`re: \${event.data.body}\` });
  },
});
`;

interface Note {
  token: { label: string | null } | null;
  status: number;
  body: { body: string } | null;
  path: string;
}

/** Runs the built CLI to its end in `cwd` with only PATH, HOME and `env`. */
function cli(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; err: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.once('close', (code) => res({ code, err }));
  });
}

describe('switchyard dev --workspaces 2 (built CLI, ephemeral ports)', () => {
  let project: string | undefined;
  let dev: ServiceProcess | undefined;
  afterEach(async () => {
    if (dev) await stopServiceProcess(dev);
    dev = undefined;
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it("runs the loop for two workspaces: a reply is written in the customer's workspace only; Ctrl-C stops it", async () => {
    project = userProject('dev-ws', { 'reply.ts': REPLY });
    const [port, sandboxPort] = [await freePort(), await freePort()];
    dev = startServiceProcess(
      'dev',
      project,
      { PORT: String(port), SANDBOX_PORT: String(sandboxPort), REDIS_URL: testRedisUrl(), QUEUE_PREFIX: uniquePrefix('devws') },
      ['--workspaces', '2'],
    );
    await dev.waitFor(/"msg":"receiver listening"/, 1, 30_000);
    const sandbox = `http://127.0.0.1:${sandboxPort}`;
    const receiver = `http://127.0.0.1:${port}/webhooks`;

    // The first lines say which workspaces there are, where each one's events go, and how to write in one.
    const out = dev.output();
    expect(out).toContain('dev: 2 workspaces, each its own webhook URL, signing secret and sandbox token:');
    expect(out).toMatch(
      new RegExp(`dev: +acme +Acme \\(sandbox workspace \\d+\\): events to ${receiver}/acme, signed with WEBHOOK_SECRETS`),
    );
    expect(out).toMatch(new RegExp(`dev: +other +Other Co \\(sandbox workspace \\d+\\): events to ${receiver}/other, secret kept in `));
    expect(out).toContain(`curl -X POST ${sandbox}/_sandbox/inbound`);
    const shared = JSON.parse(readFileSync(join(project, '.switchyard', 'dev-workspaces.json'), 'utf8')) as {
      workspaces: { id: string; token: string; secrets: string[] }[];
    };
    const otherSecret = readFileSync(join(project, '.switchyard', 'dev-secret-other'), 'utf8').trim();
    expect(shared.workspaces.map((w) => [w.id, w.token])).toEqual([
      ['acme', 'sbx_full_acme'],
      ['other', 'sbx_full_other'],
    ]);
    expect(shared.workspaces[1]!.secrets).toEqual([otherSecret]);
    expect(shared.workspaces[0]!.secrets).not.toContain(otherSecret);

    const hook = async <T>(path: string, body?: unknown): Promise<T> => {
      const r = await fetch(`${sandbox}/_sandbox${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      expect(r.status).toBeLessThan(300);
      return ((await r.json()) as { data: T }).data;
    };
    const webhooks = await hook<{ workspace: string; url: string | null }[]>('/webhooks');
    expect(webhooks.map((w) => [w.workspace, w.url])).toEqual([
      ['acme', `${receiver}/acme`],
      ['other', `${receiver}/other`],
    ]);
    const [acme, other] = await hook<{ id: number; conversation_ids: number[] }[]>('/workspaces');
    /** Notes the handlers wrote, with the label of the token each was written with (the sandbox's request log). */
    const notes = async (): Promise<{ by: string | null; body: string }[]> =>
      (await hook<Note[]>('/requests?method=POST&path=/conversations/*/notes'))
        .filter((n) => n.status === 201)
        .map((n) => ({ by: n.token?.label ?? null, body: n.body?.body ?? '' }));
    const messagesOf = async (conv: number, token: string): Promise<number> =>
      (await fetch(`${sandbox}/api/v1/conversations/${conv}/messages`, { headers: { authorization: `Bearer ${token}` } })).status;

    // A customer writes in workspace 2: the reply is written there, with its token, and nowhere else.
    await hook('/inbound', { workspace: 'other', conversation_id: other!.conversation_ids[0], body: 'hallo from other' });
    await waitFor(async () => (await notes()).some((n) => n.body === 're: hallo from other'), 20_000);
    expect(await notes()).toEqual([{ by: 'other-workspace-full', body: 're: hallo from other' }]);
    expect(await messagesOf(other!.conversation_ids[0]!, 'sbx_full_acme')).toBe(404);

    // And in workspace 1: written there with Acme's token.
    await hook('/inbound', { workspace: 'acme', conversation_id: acme!.conversation_ids[0], body: 'hello from acme' });
    await waitFor(async () => (await notes()).length === 2, 20_000);
    expect(await notes()).toEqual([
      { by: 'other-workspace-full', body: 're: hallo from other' },
      { by: 'full', body: 're: hello from acme' },
    ]);
    // From another terminal, as the banner says, with no set-up: send finds dev's workspaces and sends into
    // workspace 2, signed with its secret, to its URL; the reply is written there.
    const sent = await cli(
      [
        'send',
        'message.received',
        '--workspace',
        'other',
        '--set',
        `data.conversation_id=${other!.conversation_ids[0]}`,
        '--set',
        'data.body=sent',
      ],
      project,
      {},
    );
    expect([sent.code, sent.err]).toEqual([0, expect.stringContaining(`at ${receiver}/other`)]);
    expect(sent.err).toContain(
      `using the workspaces of the running switchyard dev (${join(project, '.switchyard', 'dev-workspaces.json')})`,
    );
    await waitFor(async () => (await notes()).length === 3, 20_000);
    expect((await notes())[2]).toEqual({ by: 'other-workspace-full', body: 're: sent' });

    // Each event went to its own workspace's URL only, and was accepted there.
    const deliveries = await hook<{ event: string; url: string; state: string; workspace_id: number }[]>('/deliveries');
    const received = deliveries.filter((d) => d.event === 'message.received').map((d) => [d.workspace_id, d.url, d.state]);
    expect(received).toEqual([
      [other!.id, `${receiver}/other`, 'delivered'],
      [acme!.id, `${receiver}/acme`, 'delivered'],
    ]);

    // Ctrl-C: every part stops, exit 0, the shared workspaces file is removed.
    process.kill(-dev.child.pid!, 'SIGINT');
    expect(await dev.exited).toBe(0);
    expect(dev.output()).toContain('shutting down');
    expect(existsSync(join(project, '.switchyard', 'dev-workspaces.json'))).toBe(false);
  });

  it('refuses a --workspaces that is not a count the sandbox can make, saying what is expected', async () => {
    project = userProject('dev-ws-bad', {});
    for (const [value, message] of [
      ['0', '--workspaces: expected a whole number of workspaces from 1 to 100, got "0"'],
      ['x', '--workspaces: expected a whole number of workspaces from 1 to 100, got "x"'],
      ['101', '--workspaces: the sandbox makes at most 100 workspaces, got 101'],
    ]) {
      const r = await cli(['dev', '--workspaces', value!], project, { REDIS_URL: testRedisUrl() });
      expect([value, r.code, r.err.split('\n')[0]]).toEqual([value, 2, `switchyard dev: ${message}`]);
    }
  });
});
