import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../../src/index.js';
import { createEvent, testHandler } from '../../../src/testing/index.js';
import misuse from '../../support/handlers/workflow-calls/misuse.js';
import { MISUSE_REASONS, misuseReason } from '../../support/workflow-misuse.js';

/**
 * testHandler refuses a misused workflow call as the worker does (one validation, src/handler/workflow-calls.ts
 * and state-value.ts): a HandlerConfigError, the run dead on its first attempt, the same words
 * (test/integration/worker/durable-misuse.test.ts checks the worker against the same list).
 */
const opened = (subject: string) => createEvent('conversation.opened', { data: { id: 38, subject } });

describe('a misused workflow call in testHandler', () => {
  it.each(Object.keys(MISUSE_REASONS))('%s: dead on attempt 1 with the shared message', async (subject) => {
    const run = await testHandler(misuse, opened(subject));
    expect(run.outcome).toBe('dead');
    expect(run.delivery.attempt).toBe(1);
    const want = misuseReason(subject, 38);
    if (typeof want === 'string') expect(run.reason).toBe(want);
    else expect(run.reason).toMatch(want);
    // Nothing was kept by a refused state write.
    expect(run.state).toBeNull();
  });

  it("a sleep or wait up to the longest (7d) is taken; the run's sleeps must end within 8 days of its receipt", async () => {
    const h = defineHandler({
      id: 'two-weeks',
      on: ['conversation.opened'],
      async handle(_e, ctx) {
        await ctx.sleep('week-1', '7d');
        await ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: '7d' });
      },
    });
    const run = await testHandler(h, opened('x'));
    expect(run.outcome).toBe('dead');
    expect(run.waits.map((w) => w.name)).toEqual(['week-1']);
    expect(run.reason).toMatch(
      /^HandlerConfigError: ctx\.waitForEvent\("reply"\) in handler "two-weeks": ends .*, 14d after the run's event was received; a run's sleeps and waits must all end within 8d of it: /,
    );
  });

  it('DEDUPE_TTL in the environment raises the longest sleep, as in the worker', async () => {
    const h = defineHandler({ id: 'long', on: ['conversation.opened'], handle: (_e, ctx) => ctx.sleep('month', '30d') });
    const before = process.env.DEDUPE_TTL;
    process.env.DEDUPE_TTL = '31d';
    try {
      expect((await testHandler(h, opened('x'))).outcome).toBe('completed');
    } finally {
      if (before === undefined) delete process.env.DEDUPE_TTL;
      else process.env.DEDUPE_TTL = before;
    }
    expect((await testHandler(h, opened('x'))).reason).toContain('30d is longer than the longest sleep or wait, 7d');
  });
});
