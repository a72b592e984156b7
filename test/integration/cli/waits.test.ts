/** `switchyard waits` and the waits' metrics: the runs parked in durable sleeps and waits, from a real pipeline's Redis. */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitsCommand, type WaitRow } from '../../../src/cli/waits.js';
import { conversationBody, lifecycleBody, messageBody } from '../../support/events.js';
import { memoryIo } from '../../support/io.js';
import { parseSamples, valueOf } from '../../support/prom-text.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/waits-cli', import.meta.url));
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;

describe('switchyard waits', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  const conv = 7001;
  const bodies = {
    opened: conversationBody('conversation.opened', conv, null),
    closed: conversationBody('conversation.closed', conv, null),
  };
  const run = async (...argv: string[]) => {
    const io = memoryIo(env);
    const code = await waitsCommand.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };
  const listed = async (...argv: string[]) => JSON.parse((await run('--json', ...argv)).out) as { total: number; waits: WaitRow[] };

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
    for (const body of Object.values(bodies)) expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    await waitFor(async () => (await listed()).total === 2, 20_000, 50);
  });
  afterAll(async () => p?.close());

  it('--json lists each parked run soonest due first: handler, name, kind, due time, what a wait waits for, its delivery', async () => {
    const before = Date.now();
    const { total, waits } = await listed();
    expect(total).toBe(2);
    expect(waits.map((w) => [w.handler, w.name, w.kind, w.deliveryKey])).toEqual([
      ['cli-napper', 'nap', 'sleep', keyOf(bodies.opened)],
      ['cli-listener', 'reply', 'wait-for-event', keyOf(bodies.closed)],
    ]);
    const [nap, reply] = waits as [WaitRow, WaitRow];
    // Due ten minutes and an hour after the runs parked (a few seconds ago at most).
    expect(nap.dueAt - before).toBeGreaterThan(590_000);
    expect(nap.dueAt - before).toBeLessThanOrEqual(600_000);
    expect(reply.dueAt - before).toBeGreaterThan(3_590_000);
    expect(new Date(reply.due).getTime()).toBe(reply.dueAt);
    expect(reply.event).toBe('message.received');
    expect(reply.key).toBe(`conversation:${conv}`);
  });

  it('filters by handler, kind and due time; the table names each run, and says when none matches', async () => {
    expect((await listed('--kind', 'sleep')).waits.map((w) => w.handler)).toEqual(['cli-napper']);
    expect((await listed('--handler', 'cli-listener')).waits.map((w) => w.name)).toEqual(['reply']);
    expect((await listed('--due-within', '30m')).waits.map((w) => w.handler)).toEqual(['cli-napper']);
    const table = await run();
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/^DUE\s+HANDLER\s+KIND\s+NAME\s+WAITING FOR\s+DELIVERY\n/);
    expect(table.out).toMatch(new RegExp(`\\(in 10m\\)\\s+cli-napper\\s+sleep\\s+nap\\s+-\\s+${keyOf(bodies.opened)}\\n`));
    expect(table.out).toMatch(
      new RegExp(`cli-listener\\s+wait\\s+reply\\s+message.received conversation:${conv}\\s+${keyOf(bodies.closed)}\\n`),
    );
    expect((await run('--handler', 'nobody')).out).toBe('No parked run matches (2 parked in all).\n');
  });

  it('metrics: parked runs pending, and each sleep and wait counted as it begins and ends', async () => {
    const samples = parseSamples(await p.service.metrics.scrape());
    expect(valueOf(samples, 'switchyard_waits_pending')).toBe(2);
    const waits = (handler: string, kind: string, outcome: string) =>
      valueOf(samples, 'switchyard_waits_total', { handler, kind, outcome });
    expect([waits('cli-napper', 'sleep', 'begun'), waits('cli-listener', 'wait-for-event', 'begun')]).toEqual([1, 1]);
    expect(valueOf(samples, 'switchyard_wait_wake_lateness_seconds_count', { kind: 'sleep' })).toBeUndefined();
  });

  it('a wait answered by its event leaves the list and is counted; bad flags say what was expected', async () => {
    expect((await deliver(p.receiverUrl, messageBody('message.received', conv, 'I am back'))).status).toBe(202);
    await waitFor(async () => (await listed()).total === 1, 20_000, 50);
    expect((await listed()).waits.map((w) => w.handler)).toEqual(['cli-napper']);
    await waitFor(
      async () =>
        valueOf(parseSamples(await p.service.metrics.scrape()), 'switchyard_waits_total', {
          handler: 'cli-listener',
          kind: 'wait-for-event',
          outcome: 'event',
        }) === 1,
      10_000,
      50,
    );
    expect(valueOf(parseSamples(await p.service.metrics.scrape()), 'switchyard_waits_pending')).toBe(1);
    await expect(run('--kind', 'nap')).rejects.toThrow('--kind: expected sleep or wait, got "nap"');
    await expect(run('--due-within', 'soon')).rejects.toThrow('--due-within: expected a duration such as 30s, 15m, 2h or 3d, got "soon"');
  });

  it('a sleep that wakes is counted `due`, with how late after its time the run resumed', async () => {
    expect((await deliver(p.receiverUrl, lifecycleBody(9, 'Customer'))).status).toBe(202);
    const lateness = async () =>
      valueOf(parseSamples(await p.service.metrics.scrape()), 'switchyard_wait_wake_lateness_seconds_count', { kind: 'sleep' });
    await waitFor(async () => (await lateness()) === 1, 20_000, 50);
    const samples = parseSamples(await p.service.metrics.scrape());
    expect(valueOf(samples, 'switchyard_waits_total', { handler: 'cli-dozer', kind: 'sleep', outcome: 'due' })).toBe(1);
    expect(valueOf(samples, 'switchyard_wait_wake_lateness_seconds_sum', { kind: 'sleep' })).toBeGreaterThanOrEqual(0);
    expect((await listed()).waits.map((w) => w.handler)).toEqual(['cli-napper']);
  });
});
