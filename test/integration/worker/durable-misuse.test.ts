import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId } from '../../support/events.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { HandlerStateStore } from '../../../src/queue/state/state-store.js';
import { MISUSE_REASONS, misuseReason } from '../../support/workflow-misuse.js';

const DIR = fileURLToPath(new URL('../../support/handlers/workflow-calls', import.meta.url));

/**
 * A misused workflow call in the real worker (signed deliveries in, real Redis and BullMQ): a configuration
 * error, dead-lettered on the first attempt with the message testHandler gives
 * (test/unit/testing/workflow-misuse.test.ts checks the kit against the same list): not retried, not parked,
 * not completed; a refused state write keeps nothing.
 */
describe('a misused workflow call in the worker', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: DIR, env: { HISTORY: 'off' } });
  });
  afterAll(async () => p?.close());

  it('each misuse is dead-lettered on attempt 1 with the shared message', async () => {
    const subjects = Object.keys(MISUSE_REASONS);
    const ids = new Map<string, { id: string; conv: number }>();
    for (const [i, subject] of subjects.entries()) {
      const conv = 81_000 + i;
      const body = conversationBody('conversation.opened', conv, subject);
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
      ids.set(subject, { id: deliveryId(body), conv });
    }
    for (const subject of subjects) {
      const { id, conv } = ids.get(subject) as { id: string; conv: number };
      const jobId = jobIdFor(id, 'wf-misuse');
      const job = await waitFor(async () => {
        const j = await p.handlers.getJob(jobId);
        return j && (await j.isFailed()) ? j : undefined;
      }, 15_000);
      expect(job.attemptsMade, subject).toBe(1);
      const want = misuseReason(subject, conv);
      if (typeof want === 'string') expect(job.failedReason, subject).toBe(want);
      else expect(job.failedReason, subject).toMatch(want);
      expect(await new HandlerStateStore(p.redis, p.prefix).get('wf-misuse', `conversation:${conv}`), subject).toBeUndefined();
    }
    // None of them is parked.
    expect(await p.redis.zcard(`${p.prefix}:wf:due`)).toBe(0);
  }, 60_000);
});

describe('the longest sleep follows DEDUPE_TTL', () => {
  it('with DEDUPE_TTL=500d, a 400d sleep parks the run (refused at the default 7d)', async () => {
    const p = await startPipeline({ handlersDir: DIR, env: { HISTORY: 'off', DEDUPE_TTL: '500d' } });
    try {
      const body = conversationBody('conversation.opened', 82_001, 'sleep-400d');
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
      const job = await waitFor(async () => {
        const j = await p.handlers.getJob(jobIdFor(deliveryId(body), 'wf-misuse'));
        return j && (await j.isDelayed()) ? j : undefined;
      }, 15_000);
      expect(job.attemptsMade).toBe(0);
      expect(await p.redis.zcard(`${p.prefix}:wf:due`)).toBe(1);
    } finally {
      await p.close();
    }
  }, 30_000);
});
