/**
 * A killed `dev` or `start` (SIGKILL of the switchyard process only, as a
 * closed IDE or an out-of-memory kill does) with deliveries acknowledged and
 * not yet handled: its managed redis-server stops itself (AOF flushed), the
 * next `dev`/`start` in the project runs on the same data with exactly one
 * redis-server, and every delivery is handled once (one note each at the API).
 * And a redis-server left running on the data directory by an owner that is
 * gone (an older version, a watch that was killed too) is stopped cleanly
 * before the new one starts: never two servers on one data directory.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { sign } from '../../../src/events/signature.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { redisServersOn, startServiceProcess, stopServiceProcess, userProject, type ServiceProcess } from '../../support/dev-process.js';
import { startSandbox, TOKENS, type SandboxHarness } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const SECRET = 'owner-kill-secret';
const DELIVERIES = 40;

/** A note per inbound message, after a pause (so a kill finds runs acknowledged and not yet handled). */
const HANDLER = `import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'slow-note',
  on: ['message.received'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    await new Promise((r) => setTimeout(r, 150));
    await ctx.api.notes.create(event.data.conversation_id, { body: \`run \${ctx.delivery.key}\` });
  },
});
`;

describe('a killed dev/start and its managed redis-server', () => {
  let project: string | undefined;
  let sandbox: SandboxHarness | undefined;
  const running: ServiceProcess[] = [];
  afterEach(async () => {
    for (const p of running.splice(0)) await stopServiceProcess(p);
    // Whatever a failed test left on its data directory.
    if (project)
      for (const pid of redisServersOn(join(project, '.switchyard', 'redis')))
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
    await sandbox?.close();
    sandbox = undefined;
    if (project) rmSync(project, { recursive: true, force: true });
    project = undefined;
  });

  for (const command of ['dev', 'start'] as const) {
    it(`${command} SIGKILLed with deliveries pending: its redis-server stops itself; the next ${command} handles each delivery once on one redis-server`, async () => {
      sandbox = await startSandbox();
      const conv = (await sandbox.seed()).conversation_ids[0] as number;
      project = userProject(`owner-kill-${command}`, { 'slow-note.ts': HANDLER });
      const cwd = project;
      const data = join(cwd, '.switchyard', 'redis');
      const port = await freePort();
      const env = {
        // A short lock: the killed process's active runs are taken up again within seconds.
        PORT: String(port),
        WEBHOOK_SECRETS: SECRET,
        WORKER_CONCURRENCY: '2',
        JOB_LOCK_DURATION: '2s',
        WORKSPACE_API_URL: sandbox.running.baseUrl,
        WORKSPACE_API_TOKEN: TOKENS.full,
      };
      const launch = async (): Promise<ServiceProcess> => {
        const p = startServiceProcess(command, cwd, env);
        running.push(p);
        await p.waitFor(/"msg":"receiver listening"/, 1, 30_000);
        return p;
      };
      /** Notes created (an idempotent replay of a run taken up again after the kill creates none). */
      const notes = async (): Promise<string[]> => {
        const r = await sandbox!.hook<{ body: { body: string } | null; status: number; replay: boolean }[]>(
          'GET',
          '/requests?method=POST&path=/conversations/*/notes',
        );
        return r.filter((q) => q.status === 201 && !q.replay).map((q) => q.body?.body ?? '');
      };

      const first = await launch();
      expect(redisServersOn(data)).toHaveLength(1);
      const bodies = Array.from({ length: DELIVERIES }, () => messageBody('message.received', conv));
      for (const body of bodies) {
        const r = await fetch(`http://127.0.0.1:${port}/webhooks`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', 'x-service-signature': sign(SECRET, body) },
        });
        expect(r.status).toBe(202);
      }
      // Some handled, most acknowledged and waiting: kill the switchyard process alone.
      await waitFor(async () => (await notes()).length >= 3, 20_000);
      process.kill(first.child.pid as number, 'SIGKILL');
      await first.exited;
      const handledBeforeKill = (await notes()).length;
      expect(handledBeforeKill).toBeLessThan(DELIVERIES);
      // Its redis-server notices its owner is gone and stops (flushing its AOF) within seconds.
      await waitFor(() => redisServersOn(data).length === 0, 10_000);

      const second = await launch();
      expect(second.output()).toContain(
        command === 'dev' ? 'ended without stopping; taking over its state' : 'started a managed local redis-server',
      );
      expect(redisServersOn(data)).toHaveLength(1);
      await waitFor(async () => (await notes()).length >= DELIVERIES, 60_000);
      // Let any run still in flight finish, then count: each delivery's note exactly once.
      await new Promise((r) => setTimeout(r, 1_000));
      const written = await notes();
      const expected = bodies.map((b) => `run ${deliveryId(b)}`).sort();
      expect([...written].sort()).toEqual(expected);
      expect(redisServersOn(data)).toHaveLength(1);
      expect(await stopServiceProcess(second)).toBe(0);
      expect(redisServersOn(data)).toHaveLength(0);
    }, 180_000);
  }

  it('a redis-server left running on the data directory by an owner that is gone is stopped cleanly (its data kept) before start runs its own', async () => {
    project = userProject('owner-orphan', {});
    const cwd = project;
    const data = join(cwd, '.switchyard', 'redis');
    const redisPort = await freePort();
    mkdirSync(data, { recursive: true });
    // What an older version left after a SIGKILL: a server with no owner (adopted by init: started
    // through a shell that exits at once), and its URL file.
    spawnSync(
      'sh',
      ['-c', `redis-server --port ${redisPort} --bind 127.0.0.1 --dir '${data}' --appendonly yes --save '' >/dev/null 2>&1 &`],
      { cwd },
    );
    // A fresh client per try: one that failed (the server not listening yet on a loaded machine) reconnects on its
    // own, and a second connect() on it is refused, so polling one client could never see the server come up.
    await waitFor(async () => {
      const probe = new Redis({ port: redisPort, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.set('left-behind', 'kept')) === 'OK';
      } catch {
        return false;
      } finally {
        probe.disconnect();
      }
    }, 20_000);
    writeFileSync(join(cwd, '.switchyard', 'redis.url'), `redis://127.0.0.1:${redisPort}\n`);
    const [orphan] = redisServersOn(data);
    expect(orphan).toBeGreaterThan(0);

    const p = startServiceProcess('start', cwd, { PORT: String(await freePort()), WEBHOOK_SECRETS: SECRET });
    running.push(p);
    await p.waitFor(/"msg":"receiver listening"/, 1, 30_000);
    expect(p.output()).toContain('a managed redis-server whose owner is gone is still running on this data directory: stopping it');
    const now = redisServersOn(data);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(orphan);
    // The new server read the orphan's flushed append-only file.
    const url = readFileSync(join(cwd, '.switchyard', 'redis.url'), 'utf8').trim();
    const fresh = new Redis(url);
    try {
      expect(await fresh.get('left-behind')).toBe('kept');
    } finally {
      fresh.disconnect();
    }
    expect(await stopServiceProcess(p)).toBe(0);
    expect(redisServersOn(data)).toHaveLength(0);
  }, 60_000);
});
