/**
 * `switchyard deliveries --where`, as a user runs it: deliveries signed and sent over HTTP to `switchyard start`
 * (receiver and worker, which keeps their bodies), then the built CLI finds them by content; a bad path or a
 * malformed expression exits 2 with a message saying what was expected. And `switchyard work` with HISTORY=off
 * says at start-up that KEEP_BODIES keeps nothing.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { deliveryId, eventBody, messageBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, TEST_SECRET } from '../../support/service.js';
import { waitFor } from '../../support/wait.js';

const prefix = uniquePrefix('e2e-where');
const env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix };

/** `switchyard deliveries <args>`: exit code, stdout and stderr apart. */
async function deliveries(...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const cli = runCli(['deliveries', ...args], env);
  let out = '';
  let err = '';
  cli.child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  cli.child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  try {
    return { code: await cli.exited, out, err };
  } finally {
    await cli.stop('SIGKILL', 1_000);
  }
}

describe('deliveries --where (built CLI, switchyard start over HTTP)', () => {
  let service: CliProcess;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    const port = await freePort();
    service = runCli(['start'], {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      WEBHOOK_SECRETS: TEST_SECRET,
      HANDLERS_DIR: mkdtempSync(join(tmpdir(), 'sy-where-handlers-')),
      LOG_LEVEL: 'info',
    });
    await service.waitFor(/worker started/, 30_000);
    await service.waitFor(/receiver listening/, 30_000);
    const url = `http://127.0.0.1:${port}/webhooks`;
    const bodies = {
      refund38: messageBody('message.received', 38, 'Hi, I would like a REFUND for order #1043'),
      hello38: messageBody('message.received', 38, 'hello'),
      refund40: messageBody('message.received', 40, 'refund please'),
      zoe: eventBody('contact.created', {
        id: 7,
        name: 'Zoe Adams',
        phone: null,
        email: 'zoe@example.com',
        lifecycle_stage_id: null,
        blocked: false,
        created_at: '2026-11-27T10:00:00Z',
        updated_at: '2026-11-27T10:00:00Z',
      }),
    };
    for (const [name, body] of Object.entries(bodies)) {
      expect((await deliver(url, body)).status).toBe(202);
      keys[name] = deliveryId(body);
    }
    await waitFor(async () => (await deliveries('--json')).out.includes(keys.zoe as string) || null, 30_000, 200);
  }, 60_000);

  afterAll(async () => {
    await service?.stop('SIGTERM');
  });

  it('finds deliveries by what they carried: contains, equals on a number, several conditions, beside --event', async () => {
    const refund = await deliveries('--where', 'data.body~refund');
    expect(refund.code).toBe(0);
    expect(refund.out).toContain(keys.refund38);
    expect(refund.out).toContain(keys.refund40);
    expect(refund.out).not.toContain(keys.hello38);
    expect(refund.out).toMatch(/\(--where: read 4 deliveries in the history, all of them\)\n$/);

    const both = await deliveries('--where', 'data.conversation_id=38', '--where', 'data.body~REFUND');
    expect(both.out.split('\n').filter((l) => l.startsWith('evt_'))).toEqual([expect.stringContaining(keys.refund38 as string)]);

    const zoe = await deliveries('--event', 'contact.created', '--where', 'data.email=zoe@example.com', '--json');
    expect(JSON.parse(zoe.out)).toMatchObject({
      deliveries: [{ key: keys.zoe, event: 'contact.created' }],
      scanned: 4,
      withoutBody: 0,
    });
  });

  it('a path no event has, or a malformed expression: exit 2, what was wrong and what is expected, no stack', async () => {
    const typo = await deliveries('--where', 'data.conversaton_id=38');
    expect(typo.code).toBe(2);
    expect(typo.err).toContain(
      '--where "data.conversaton_id=38": no event of the catalogue has a field "data.conversaton_id"; did you mean data.conversation_id?',
    );
    const wrongEvent = await deliveries('--event', 'message.received', '--where', 'data.email=zoe@example.com');
    expect(wrongEvent.code).toBe(2);
    expect(wrongEvent.err).toContain('message.received has no field "data.email"');
    const noOp = await deliveries('--where', 'data.body');
    expect(noOp.code).toBe(2);
    expect(noOp.err).toContain('no operator; expected <path><op><value> with op = (equals), != (differs) or ~ (contains)');
    for (const r of [typo, wrongEvent, noOp]) {
      expect(r.out).toBe('');
      expect(r.err).not.toMatch(/\n\s+at /);
    }
  });
});

describe('KEEP_BODIES with HISTORY=off', () => {
  it('`switchyard work` says at start-up that no body is kept', async () => {
    const work = runCli(['work'], {
      ...env,
      QUEUE_PREFIX: uniquePrefix('e2e-keep-off'),
      HISTORY: 'off',
      KEEP_BODIES: '2d',
      LOG_LEVEL: 'info',
    });
    try {
      await work.waitFor(/KEEP_BODIES is set but HISTORY=off: no body is kept/, 30_000);
    } finally {
      await work.stop('SIGTERM');
    }
  });
});
