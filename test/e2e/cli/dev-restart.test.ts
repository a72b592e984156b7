import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { runCli } from '../../support/cli.js';
import { redisServersOn, startServiceProcess, stopServiceProcess, userProject, type ServiceProcess } from '../../support/dev-process.js';
import { waitFor } from '../../support/wait.js';

/** One internal note per inbound message: `seen: <body>`. */
const HANDLER = `import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'note-inbound',
  on: ['message.received'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    if (event.data.direction !== 'inbound') return;
    await ctx.api.notes.create(event.data.conversation_id, { body: \`seen: \${event.data.body}\` });
  },
});
`;

describe('switchyard dev restarted in the same project (managed Redis kept, a fresh sandbox)', () => {
  let project: string | undefined;
  const running: ServiceProcess[] = [];
  afterEach(async () => {
    for (const p of running.splice(0)) await stopServiceProcess(p);
    if (project) rmSync(project, { recursive: true, force: true });
    project = undefined;
  });

  it('runs handlers for the new sandbox (its reused ids are new changes), reconcile counts only its claims, and a second dev is refused touching nothing', async () => {
    project = userProject('dev-restart', { 'note-inbound.ts': HANDLER });
    const cwd = project;
    const [port, sandboxPort] = [await freePort(), await freePort()];
    const env = { PORT: String(port), SANDBOX_PORT: String(sandboxPort) };
    const sandbox = `http://127.0.0.1:${sandboxPort}`;
    const start = async (): Promise<ServiceProcess> => {
      const dev = startServiceProcess('dev', cwd, env);
      running.push(dev);
      await dev.waitFor(/"msg":"receiver listening"/, 1, 30_000);
      return dev;
    };
    const conversation = async (): Promise<number> =>
      ((await (await fetch(`${sandbox}/_sandbox/workspaces`)).json()) as { data: { conversation_ids: number[] }[] }).data[0]!
        .conversation_ids[0]!;
    const inbound = async (body: string): Promise<number> => {
      const r = await fetch(`${sandbox}/_sandbox/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ conversation_id: await conversation(), body }),
      });
      expect(r.status).toBeLessThan(300);
      return ((await r.json()) as { data: { message: { id: number } } }).data.message.id;
    };
    const notes = async (): Promise<string[]> => {
      const r = (await (await fetch(`${sandbox}/_sandbox/requests?method=POST&path=/conversations/*/notes`)).json()) as {
        data: { body: { body: string } | null; status: number }[];
      };
      return r.data.filter((q) => q.status === 201).map((q) => q.body?.body ?? '');
    };
    const noted = (body: string) => waitFor(async () => (await notes()).includes(body), 20_000);

    // First run: a customer writes; the handler notes it.
    const first = await start();
    const firstId = await inbound('one');
    await noted('seen: one');
    const secondId = await inbound('two');
    await noted('seen: two');
    const urlFile = join(cwd, '.switchyard', 'redis.url');
    const url = readFileSync(urlFile, 'utf8');

    // A second dev in the same directory (other ports, as the old advice said): refused up front, naming the first.
    const other = runCli(['dev'], { PORT: String(await freePort()), SANDBOX_PORT: String(await freePort()) }, cwd);
    expect(await other.exited).toBe(1);
    expect(other.output()).toContain(`switchyard dev is already running in this directory (pid ${first.child.pid}`);
    expect(other.output()).toMatch(/Stop it first \(Ctrl-C in its terminal, or kill \d+\)/);
    expect(other.output()).not.toMatch(/\n\s+at /); // no stack trace
    // Touching nothing: the first one's Redis URL file is there, one redis-server, and the first still works.
    expect(readFileSync(urlFile, 'utf8')).toBe(url);
    expect(redisServersOn(join(cwd, '.switchyard', 'redis'))).toHaveLength(1);

    // Ctrl-C, then `npm run dev` again: the same Redis data (claims of 7 days), a fresh sandbox that reuses ids.
    expect(await stopServiceProcess(first)).toBe(0);
    const second = await start();
    expect(await inbound('three')).toBe(firstId);
    await noted('seen: three');
    expect(second.output()).not.toContain('duplicate change');

    // Webhooks lost (the endpoint unset), a message reusing the id the first run claimed: reconcile must not
    // count it as received (a claim of another world), it enqueues it and the handler runs.
    const off = await fetch(`${sandbox}/_sandbox/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: null }),
    });
    expect(off.status).toBeLessThan(300);
    expect(await inbound('four')).toBe(secondId);
    const rc = runCli(
      ['reconcile', '--since', '10m', '--events', 'message.received', '--json'],
      { WORKSPACE_API_URL: `${sandbox}/api/v1`, WORKSPACE_API_TOKEN: 'sbx_full_acme' },
      cwd,
    );
    expect(await rc.exited).toBe(0);
    const report = JSON.parse(rc.output().trim().split('\n').pop() as string) as {
      events: { 'message.received': { received: number; enqueued: number; examples: string[] } };
    };
    expect(report.events['message.received'].enqueued).toBeGreaterThanOrEqual(1);
    await noted('seen: four');
    expect(await stopServiceProcess(second)).toBe(0);
    expect(existsSync(urlFile)).toBe(false);
    expect(existsSync(join(cwd, '.switchyard', 'owner.json'))).toBe(false);
  }, 150_000);
});
