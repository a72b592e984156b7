/**
 * `switchyard doctor` and runs parked for a handler that no module of
 * HANDLERS_DIR defines any more: warned per handler with the command that
 * cancels them; runs of handlers the directory defines are fine, also when
 * HANDLERS narrows this process to others.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doctorCommand } from '../../../src/cli/doctor.js';
import { conversationBody } from '../../support/events.js';
import { memoryIo } from '../../support/io.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';

const OPS = fileURLToPath(new URL('../../support/handlers/waits-ops', import.meta.url));
const OTHERS = fileURLToPath(new URL('../../support/handlers/waits-cli', import.meta.url));

type Check = { name: string; status: string; detail: string; fix?: string };

describe('switchyard doctor: parked runs of handlers no longer defined', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: OPS });
    for (const conv of [1, 2]) expect((await deliver(p.receiverUrl, conversationBody('conversation.opened', conv, null))).status).toBe(202);
    await waitFor(async () => (await new RunRecords(p.redis, p.prefix).count()) === 2, 20_000, 20);
  });
  afterAll(async () => p?.close());

  const doctor = async (env: Record<string, string | undefined>) => {
    const io = memoryIo({ REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix, WEBHOOK_SECRETS: 's', ...env });
    const code = await doctorCommand.run(['--json'], io);
    return { code, checks: (JSON.parse(io.out()) as { checks: Check[] }).checks };
  };

  it('warns with the count and the command that cancels them', async () => {
    const { checks } = await doctor({ HANDLERS_DIR: OTHERS });
    expect(checks.find((c) => c.name === 'parked runs of ops-sleeper')).toEqual({
      name: 'parked runs of ops-sleeper',
      status: 'warn',
      detail: `2 runs are parked for handler "ops-sleeper", which no module in ${OTHERS} defines (removed or renamed): nothing will run them`,
      fix: 'cancel them: switchyard waits cancel --handler ops-sleeper --yes (`switchyard waits --handler ops-sleeper` lists them)',
    });
    expect(checks.filter((c) => c.name.startsWith('parked runs'))).toHaveLength(1);
  });

  it('is fine with runs of handlers the directory defines, HANDLERS narrowing this process or not', async () => {
    for (const env of [{ HANDLERS_DIR: OPS }, { HANDLERS_DIR: OPS, HANDLERS: 'ops-waiter' }] as Record<string, string>[]) {
      const { checks } = await doctor(env);
      expect(checks.filter((c) => c.name.startsWith('parked runs'))).toEqual([
        { name: 'parked runs', status: 'ok', detail: '2 parked in a sleep or wait, each of a handler HANDLERS_DIR defines' },
      ]);
    }
  });

  it('finds them in the managed Redis of a dev running in the project when REDIS_URL is unset', async () => {
    const project = mkdtempSync(join(tmpdir(), 'sy-doctor-'));
    try {
      mkdirSync(join(project, '.switchyard'));
      // What a running `npm run dev` / `switchyard start` leaves for the project's other commands.
      writeFileSync(join(project, '.switchyard', 'redis.url'), `${testRedisUrl()}\n`);
      const { checks } = await doctor({ REDIS_URL: undefined, HANDLERS_DIR: OTHERS, SWITCHYARD_HOME: join(project, '.switchyard') });
      expect(checks.find((c) => c.name === 'parked runs of ops-sleeper')).toMatchObject({ status: 'warn' });
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
