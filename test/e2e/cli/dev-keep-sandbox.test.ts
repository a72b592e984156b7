import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { runCli } from '../../support/cli.js';
import { devRuns, stopServiceProcess, userProject } from '../../support/dev-process.js';
import { waitFor } from '../../support/wait.js';

/** A run that sleeps, then writes to the contact that started it: what a restart with a fresh sandbox turns into a 404. */
const HANDLER = `import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'label-later',
  on: ['contact.created'],
  abilities: ['contacts:write'],
  async handle(event, ctx) {
    await ctx.sleep('pause', '8s');
    await ctx.api.contacts.labels.add(event.data.id, ['vip']);
  },
});
`;

describe('switchyard dev --keep-sandbox', () => {
  let project: string | undefined;
  const runs = devRuns();
  afterEach(async () => {
    await runs.stopAll(project);
    project = undefined;
  });

  it('keeps the sandbox through a SIGKILL (a run parked on a new record finishes after the restart); without the flag the next dev starts a fresh one', async () => {
    project = userProject('dev-keep', { 'label-later.ts': HANDLER });
    const cwd = project;
    const [port, sandboxPort] = [await freePort(), await freePort()];
    const api = `http://127.0.0.1:${sandboxPort}/api/v1`;
    const headers = { authorization: 'Bearer sbx_full_acme', 'content-type': 'application/json' };
    const start = (args: string[]) => runs.start(cwd, { PORT: String(port), SANDBOX_PORT: String(sandboxPort) }, args);
    const contact = async (id: number): Promise<number> => (await fetch(`${api}/contacts/${id}`, { headers })).status;
    const stateFile = join(cwd, '.switchyard', 'sandbox-state.json');

    const first = await start(['--keep-sandbox']);
    expect(first.output()).toContain(`sandbox kept in ${stateFile} (new; saved after each change and on exit)`);
    const r = await fetch(`${api}/contacts`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Survivor', email: 'survivor@example.com' }),
    });
    expect(r.status).toBe(201);
    const id = ((await r.json()) as { data: { id: number } }).data.id;
    // The handler's run parks in its sleep; the change is saved shortly after it was made, not only on exit.
    await first.waitFor(/"msg":"run parked"/, 1, 20_000);
    await waitFor(() => existsSync(stateFile), 10_000);
    await waitFor(async () => readFileSync(stateFile, 'utf8').includes('Survivor'), 10_000);
    process.kill(first.child.pid as number, 'SIGKILL');
    await first.exited;

    const second = await start(['--keep-sandbox']);
    expect(second.output()).toMatch(/sandbox kept in .*sandbox-state\.json: taken up again/);
    expect(await contact(id)).toBe(200);
    const again = await fetch(`${api}/contacts/${id}`, { headers });
    expect(((await again.json()) as { data: { name: string } }).data.name).toBe('Survivor');
    // The parked run wakes in the restarted dev and finds its contact.
    await second.waitFor(/"handler":"label-later".*"outcome":"completed"/, 1, 30_000);
    const labels = (await (await fetch(`${api}/contacts/${id}/labels`, { headers })).json()) as { data: { name: string }[] };
    expect(labels.data.map((l) => l.name)).toEqual(['vip']);
    expect(await stopServiceProcess(second)).toBe(0);

    // The default stays fresh: the record is gone (the kept file is left alone for the next --keep-sandbox).
    const third = await start([]);
    expect(third.output()).not.toContain('sandbox kept in');
    expect(await contact(id)).toBe(404);
    expect(existsSync(stateFile)).toBe(true);
  });

  it('refuses a kept file it cannot read, naming it and what to do, before anything starts', async () => {
    project = userProject('dev-keep-bad', { 'label-later.ts': HANDLER });
    const stateFile = join(project, '.switchyard', 'sandbox-state.json');
    mkdirSync(join(project, '.switchyard'), { recursive: true });
    writeFileSync(stateFile, '{"version":1,');
    const dev = runCli(['dev', '--keep-sandbox'], { PORT: String(await freePort()), SANDBOX_PORT: String(await freePort()) }, project);
    expect(await dev.exited).toBe(1);
    expect(dev.output()).toContain(`switchyard dev: cannot read the kept sandbox ${stateFile}: it is not JSON`);
    expect(dev.output()).toContain('delete the file to start a fresh sandbox, or run without --keep-sandbox');
    expect(dev.output()).not.toMatch(/\n\s+at /);
    // Nothing listens, so no line may name the sandbox's or the dashboard's URL as if it did.
    expect(dev.output()).not.toMatch(/https?:\/\/127\.0\.0\.1/);
    expect(readFileSync(stateFile, 'utf8')).toBe('{"version":1,');
  });
});
