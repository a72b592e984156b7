/**
 * A handler's `retry` decides its jobs' attempts and back-off, through the real
 * fan-out and worker on Redis: one allowed 2 attempts is dead-lettered after
 * its second run, while another with the default retries, on the same
 * delivery, keeps going.
 */
import { fileURLToPath } from 'node:url';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageBody } from '../../support/events.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/retry', import.meta.url));

describe('per-handler retry on the real worker', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
  });
  afterAll(async () => p?.close());

  const jobOf = async (name: string): Promise<Job | undefined> =>
    (await p.handlers.getJobs(['failed', 'delayed', 'wait', 'active', 'completed'])).find((j) => j.name === name);

  it('retry: { attempts: 2 } dead-letters after 2 runs; the default keeps going', async () => {
    expect((await deliver(p.receiverUrl, messageBody('message.received', 1))).status).toBe(202);

    const early = await waitFor(
      async () => {
        const job = (await p.handlers.getJobs(['failed'])).find((j) => j.name === 'gives-up-early');
        return job && job.finishedOn ? job : undefined;
      },
      15_000,
      50,
    );
    expect(early.attemptsMade).toBe(2);
    // Dead-lettered by the worker's decision on its last attempt, not by BullMQ's count: the reason says so.
    expect(early.failedReason).toBe('Error: always fails (attempt 2 of 2: no retry left)');
    expect(early.stacktrace?.at(-1)).toMatch(/^UnrecoverableError: Error: always fails .*\n {2}caused by Error: always fails\n\s+at /);
    expect(early.opts).toMatchObject({ attempts: 2, backoff: { type: 'fixed', delay: 50 } });

    const steady = await jobOf('keeps-trying');
    expect(steady?.opts).toMatchObject({ attempts: 10, backoff: { type: 'exponential', delay: 2_000 } });
    expect(await steady?.getState()).not.toBe('failed');

    // Its second run comes 2 s after the first; a third is still to come, the job is not dead-lettered.
    const second = await waitFor(
      async () => {
        const job = await jobOf('keeps-trying');
        return job && job.attemptsMade >= 2 ? job : undefined;
      },
      10_000,
      100,
    );
    expect(await second.getState()).toBe('delayed');
    expect((await p.handlers.getJobs(['failed'])).map((j) => j.name)).toEqual(['gives-up-early']);
  });
});
