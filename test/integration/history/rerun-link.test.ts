import { fileURLToPath } from 'node:url';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesCommand } from '../../../src/cli/deliveries.js';
import { traceCommand } from '../../../src/cli/trace.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import type { DeliverySummary, Trace } from '../../../src/history/read.js';
import { rerunJobId, type HandlerJobData } from '../../../src/queue/jobs.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { memoryIo } from '../../support/io.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';

/**
 * A re-run's history (issue 34): its own, under its job id, linked both ways with the delivery it re-ran, as
 * `switchyard trace` and `switchyard deliveries` show it.
 */

const RERUN = fileURLToPath(new URL('../../support/handlers/rerun', import.meta.url));

describe('the history of a re-run', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  const run = async (cmd: typeof traceCommand, ...argv: string[]) => {
    const io = memoryIo(env);
    const code = await cmd.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: RERUN });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
  });
  afterAll(async () => {
    await p?.close();
  });

  async function finished(jobId: string): Promise<Job<HandlerJobData>> {
    return waitFor(async () => {
      const job = await p.handlers.getJob(jobId);
      return job && (job.finishedOn !== undefined ? job : undefined);
    }, 20_000);
  }

  it('trace of the original lists "rerun <id> (batch …)"; trace of the re-run says "rerun of <original>, batch …"', async () => {
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    const body = messageBody('message.received', conv, 'traced');
    const key = deliveryId(body);
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const original = await finished(jobIdFor(key, 'stepper'));
    const data: HandlerJobData = { ...original.data, rerun: { id: 'r7', of: original.id as string, batch: 'b-42', fromStep: 'draft' } };
    const ref = rerunJobId(key, 'stepper', 'r7');
    await p.handlers.add('stepper', data, { jobId: ref, attempts: 3 });
    await finished(ref);

    // History writes are batched and never awaited: wait until both ends are written.
    const traced = async (r: string) => JSON.parse((await run(traceCommand, r, '--json')).out || 'null') as Trace | null;
    const own = await waitFor(async () => {
      const t = await traced(ref);
      return t?.entries.some((e) => e.kind === 'attempt') ? t : undefined;
    });
    expect(own.rerunOf).toEqual({ key, job: jobIdFor(key, 'stepper'), id: 'r7', batch: 'b-42', fromStep: 'draft' });
    expect(own.handlers).toEqual({ stepper: 'completed' });
    const attempts = own.entries.filter((e) => e.kind === 'attempt');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      handler: 'stepper',
      outcome: 'completed',
      job: ref,
      steps: [
        { name: 'lookup', source: 'stored' },
        { name: 'draft', source: 'run' },
        { name: 'finish', source: 'run' },
      ],
    });

    const text = (await run(traceCommand, ref)).out;
    expect(text).toContain(`rerun    ${ref}  message.received`);
    expect(text).toContain(`rerun of ${key} (run ${jobIdFor(key, 'stepper')}), batch b-42, from step draft`);
    expect(text).toContain('step lookup: taken from the store');

    // The original keeps its own attempt (one, completed) and lists the re-run, with the reference to trace it.
    const back = await waitFor(async () => {
      const t = await traced(key);
      return t?.reruns?.length ? t : undefined;
    });
    expect(back.entries.filter((e) => e.kind === 'attempt')).toHaveLength(1);
    expect(back.reruns).toEqual([
      { ref, id: 'r7', handler: 'stepper', batch: 'b-42', fromStep: 'draft', outcome: 'completed', at: expect.any(Number) as unknown },
    ]);
    const originalText = (await run(traceCommand, key)).out;
    expect(originalText).toContain(`rerun    r7 (batch b-42, from step draft) of stepper: completed  → switchyard trace ${ref}`);

    // `deliveries` lists the delivery once (not its re-run), with its handler's latest re-run beside its state.
    const listed = JSON.parse((await run(deliveriesCommand, '--json')).out) as { deliveries: DeliverySummary[] };
    expect(listed.deliveries.map((d) => d.key)).toEqual([key]);
    expect((await run(deliveriesCommand)).out).toContain('stepper:completed (rerun r7:completed)');
  });

  it('says why a re-run reference has no history yet', async () => {
    const ref = rerunJobId('evt_nothing', 'stepper', 'r1');
    const r = await run(traceCommand, ref);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('no attempt of this re-run of evt_nothing by handler "stepper" is recorded');
  });
});
