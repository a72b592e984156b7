/**
 * A workflow parked on a handler that was then deleted, found and cancelled
 * with the built CLI as a user would: the runs park (a pipeline in this
 * process), the handler's module is gone from the next deploy (`switchyard
 * work` on a directory without it warns, with the command), `switchyard
 * doctor` says the same, a bulk cancel without a terminal is refused, the
 * printed command cancels them, `trace` shows who did it; a wait woken with
 * `waits wake` returns null.
 */
import { fileURLToPath } from 'node:url';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { conversationBody, deliveryId } from '../../support/events.js';
import { runCli } from '../../support/cli.js';
import { startPipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';
import type { OpsEntry } from '../../support/handlers/waits-ops/tally.js';

const OPS = fileURLToPath(new URL('../../support/handlers/waits-ops', import.meta.url));
const NEXT_DEPLOY = fileURLToPath(new URL('../../support/handlers/waits-cli', import.meta.url));
const g = globalThis as { __syOps?: Map<string, OpsEntry> };

describe('waits cancel | wake with the built CLI: runs parked on a deleted handler', () => {
  let api: RunningSandbox;
  let env: Record<string, string>;
  const sleepers: string[] = [];
  let waiter = '';

  /** Runs `switchyard <args>` to its end: exit code and output. */
  const cli = async (args: string[], extra: Record<string, string> = {}) => {
    const proc = runCli(args, { ...env, ...extra });
    try {
      return { code: await proc.exited, out: proc.output() };
    } finally {
      await proc.stop('SIGKILL', 1000);
    }
  };

  beforeAll(async () => {
    api = await createSandbox().listen(0);
    const p = await startPipeline({ handlersDir: OPS });
    try {
      for (const conv of [31, 32]) {
        const body = conversationBody('conversation.opened', conv, null);
        expect((await deliver(p.receiverUrl, body)).status).toBe(202);
        sleepers.push(deliveryId(body));
      }
      const assigned = conversationBody('conversation.assigned', 33, null);
      expect((await deliver(p.receiverUrl, assigned)).status).toBe(202);
      waiter = deliveryId(assigned);
      await waitFor(async () => (await new RunRecords(p.redis, p.prefix).count()) === 3, 20_000, 20);
      env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix, HANDLERS_DIR: NEXT_DEPLOY, WEBHOOK_SECRETS: 's' };
    } finally {
      await p.close();
    }
  }, 60_000);
  afterAll(async () => api?.close());

  it('the next deploy warns at start-up and doctor names them, each with the command that cancels them', async () => {
    const work = runCli(['work'], { ...env, LOG_LEVEL: 'info', WORKSPACE_API_URL: api.baseUrl, WORKSPACE_API_TOKEN: 'sbx_full_acme' });
    try {
      await work.waitFor(/2 runs are parked for handler \\?"ops-sleeper\\?", which no module in HANDLERS_DIR defines/);
      await work.waitFor(/cancel it with: switchyard waits cancel --handler ops-waiter --yes/);
    } finally {
      await work.stop('SIGTERM');
    }
    const doctor = await cli(['doctor']);
    expect(doctor.out).toContain(
      `warn  parked runs of ops-sleeper: 2 runs are parked for handler "ops-sleeper", which no module in ${NEXT_DEPLOY} defines (removed or renamed): nothing will run them\n` +
        '      fix: cancel them: switchyard waits cancel --handler ops-sleeper --yes (`switchyard waits --handler ops-sleeper` lists them)\n',
    );
  }, 60_000);

  it('a bulk cancel without a terminal is refused and lists them; the printed command cancels them; trace says who', async () => {
    const refused = await cli(['waits', 'cancel', '--handler', 'ops-sleeper']);
    expect(refused.code).toBe(2);
    expect(refused.out).toContain('2 parked runs match:\n');
    for (const k of sleepers) expect(refused.out).toContain(k);
    expect(refused.out).toContain(
      'refusing to cancel 2 parked runs without confirmation: stdin is not a terminal; add --yes to cancel them',
    );
    const done = await cli(['waits', 'cancel', '--handler', 'ops-sleeper', '--yes', '--reason', 'handler removed in 2.0']);
    expect(done.code, done.out).toBe(0);
    expect(done.out).toContain(`2 of 2 runs cancelled by ${userInfo().username}.\n`);
    const trace = await cli(['trace', sleepers[0] as string]);
    expect(trace.out).toMatch(
      new RegExp(
        `ops-sleeper {2}cancelled in sleep nap by ${userInfo().username} \\(cli\\): handler removed in 2\\.0; no further step runs`,
      ),
    );
    const left = await cli(['waits', '--json']);
    expect((JSON.parse(left.out) as { waits: { handler: string }[] }).waits.map((w) => w.handler)).toEqual(['ops-waiter']);
  }, 60_000);

  it('waits wake: the wait is made to return null (it goes on once a worker that runs its handler takes it)', async () => {
    const woke = await cli(['waits', 'wake', waiter, '--actor', 'on-call']);
    expect(woke.code, woke.out).toBe(0);
    expect(woke.out).toBe(`woken: its wait returns null now: ops-waiter in wait reply, delivery ${waiter}\n`);
    expect((await cli(['trace', waiter])).out).toMatch(
      /ops-waiter {2}woken in wait reply by on-call \(cli\): it returns null now, as if it timed out/,
    );
    // Its handler is loaded again (a pipeline in this process, as the deploy that had it): the run goes on, with null.
    const p = await startPipeline({ handlersDir: OPS, env: { QUEUE_PREFIX: env['QUEUE_PREFIX'] as string } });
    try {
      await waitFor(async () => g.__syOps?.get(waiter)?.after === 1, 20_000, 20);
      expect(g.__syOps?.get(waiter)?.got).toEqual(['null']);
    } finally {
      await p.close();
    }
    expect((await cli(['waits'])).out).toBe('No run is sleeping or waiting.\n');
  }, 60_000);
});
