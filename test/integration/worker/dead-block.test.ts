import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { messageBody as message } from '../../support/events.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';
import { memoryIo } from '../../support/io.js';
import { dlqCommand } from '../../../src/cli/dlq.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { OrderGate } from '../../../src/queue/order.js';

/**
 * `onDead: 'block'`: a dead run holds its key; `switchyard dlq purge` or
 * `dlq retry` of it lets the key go on at once, also when the next run had
 * started once and waits parked (its job delayed until promoted).
 */
const FLOW = fileURLToPath(new URL('../../support/handlers/flow', import.meta.url));

type Entry = Record<string, unknown> & { h: string };
const g = globalThis as { __syFlow?: Entry[]; __syCured?: boolean };
const bodies = (conv: number) => (g.__syFlow ?? []).filter((e) => e.h === 'poison-block' && e['conv'] === conv).map((e) => e['body']);

describe('onDead: block — purging or retrying the dead run lets the next run start at once', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  const dlq = async (...argv: string[]) => {
    const io = memoryIo(env);
    expect(await dlqCommand.run(argv, io)).toBe(0);
    return io.out();
  };
  const lineOf = async () => new OrderGate(p.redis, p.prefix, { doneTtlMs: 60_000 }).backlog('poison-block');

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: FLOW, only: ['poison-block'] });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
  });
  afterAll(async () => {
    g.__syCured = false;
    await p?.close();
  });
  beforeEach(() => {
    g.__syFlow = [];
    g.__syCured = false;
  });

  /**
   * A later event's run reaches the queue first (the queue is paused meanwhile), then an earlier
   * event of the key joins the line: the later run, as it starts, yields to it and waits parked.
   * The earlier one is dead-lettered and, with `block`, holds the key.
   */
  async function parkedBehindDeadRun(conv: number): Promise<{ afterJob: string }> {
    const base = Date.now();
    const after = message('message.sent', conv, 'after', base + 2);
    const afterJob = jobIdFor((JSON.parse(after) as { id: string }).id, 'poison-block');
    await p.handlers.pause();
    try {
      expect((await deliver(p.receiverUrl, after)).status).toBe(202);
      await waitFor(async () => (await p.handlers.getJob(afterJob)) !== undefined, 5_000);
      expect((await deliver(p.receiverUrl, message('message.sent', conv, 'poison', base + 1))).status).toBe(202);
      await waitFor(async () => (await lineOf()).pending === 2, 5_000);
    } finally {
      await p.handlers.resume();
    }
    await waitFor(async () => (await p.handlers.getFailedCount()) === 1, 10_000);
    await waitFor(async () => (await p.handlers.getJob(afterJob))?.isDelayed() ?? false, 5_000);
    expect(bodies(conv)).toEqual([]);
    return { afterJob };
  }

  it('dlq purge: the parked next run starts at once', async () => {
    const conv = 9_600;
    await parkedBehindDeadRun(conv);
    await new Promise((r) => setTimeout(r, 300));
    expect(bodies(conv)).toEqual([]);
    expect(await dlq('purge', '--handler', 'poison-block')).toBe('1 dead job deleted\n');
    // PARKED_MS (10 minutes) is the fallback; the purge must hand the key over now.
    await waitFor(() => bodies(conv).length === 1, 5_000);
    expect(bodies(conv)).toEqual(['after']);
    await waitFor(async () => (await lineOf()).pending === 0, 5_000);
  });

  it('dlq retry: the dead run runs again first, then the parked next run, at once', async () => {
    const conv = 9_601;
    await parkedBehindDeadRun(conv);
    g.__syCured = true;
    expect(await dlq('retry', '--handler', 'poison-block')).toMatch(/^1 job moved back to waiting$/m);
    await waitFor(() => bodies(conv).length === 2, 5_000);
    expect(bodies(conv)).toEqual(['poison', 'after']);
    await waitFor(async () => (await lineOf()).pending === 0, 5_000);
  });

  it('dlq purge with the next run not started yet: it starts at once', async () => {
    const conv = 9_602;
    const base = Date.now();
    for (const [i, body] of ['poison', 'after'].entries())
      expect((await deliver(p.receiverUrl, message('message.sent', conv, body, base + i))).status).toBe(202);
    await waitFor(async () => (await p.handlers.getFailedCount()) === 1, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(bodies(conv)).toEqual([]);
    expect(await dlq('purge', '--handler', 'poison-block')).toBe('1 dead job deleted\n');
    await waitFor(() => bodies(conv).length === 1, 5_000);
    expect(bodies(conv)).toEqual(['after']);
  });
});
