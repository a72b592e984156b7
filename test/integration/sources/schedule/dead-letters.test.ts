import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqCommand } from '../../../../src/cli/dlq.js';
import { traceCommand } from '../../../../src/cli/trace.js';
import type { DeadDetail, DeadEntry } from '../../../../src/queue/dlq.js';
import { parseSamples, valueOf } from '../../../support/prom-text.js';
import { startPipeline, type Pipeline } from '../../../support/pipeline.js';
import { testRedisUrl } from '../../../support/redis.js';
import { memoryIo } from '../../../support/io.js';
import { waitFor } from '../../../support/wait.js';

const SCHEDULES = fileURLToPath(new URL('../../../support/handlers/schedule-dead', import.meta.url));
const g = globalThis as { __syScheduleCured?: boolean; __syScheduleRuns?: { tick: string; key: string }[] };

/** A schedule run that fails for good is a dead letter like a handler run: listed, shown, retried for the same tick. */
describe('dead-lettered schedule runs', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  const run = async (...argv: string[]) => {
    const io = memoryIo(env);
    const code = await dlqCommand.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };
  const list = async (...argv: string[]) => (JSON.parse((await run('list', '--json', ...argv)).out) as { entries: DeadEntry[] }).entries;

  beforeAll(async () => {
    g.__syScheduleCured = false;
    g.__syScheduleRuns = [];
    p = await startPipeline({ handlersDir: SCHEDULES });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
    // The job scheduler makes the first tick's job at once; it fails for good on its one attempt.
    await waitFor(async () => (await list('--queue', 'schedules')).length === 1, 15_000, 50);
  });
  afterAll(async () => {
    delete g.__syScheduleCured;
    delete g.__syScheduleRuns;
    await p?.close();
  });

  it('dlq list shows it with the schedule as handler and its tick as key; filters by --handler and --queue', async () => {
    const [e] = await list();
    expect(e).toMatchObject({
      queue: 'schedules',
      event: 'schedule',
      handler: 'nightly-export',
      reason: 'UnrecoverableError: export target unreachable',
      attempts: 1,
    });
    expect(e?.key).toBe(`schedule:nightly-export:${e?.receivedAt}`);
    expect(await list('--handler', 'nightly-export')).toHaveLength(1);
    expect(await list('--event', 'schedule')).toHaveLength(1);
    expect(await list('--event', 'lead.won')).toHaveLength(0);
    expect(await list('--queue', 'handlers')).toHaveLength(0);
    const text = await run('list');
    expect(text.out).toMatch(/schedules\s+schedule\s+nightly-export\s+.*export target unreachable/);
    // Kept until retried or purged, as handler runs are (BullMQ's count trim would be shared by every schedule).
    expect((await p.dlq.schedules.getJobScheduler('nightly-export'))?.template?.opts?.removeOnFail).toBe(false);
  });

  it('dlq show finds it by job id and by key, names the tick, and points to its trace, which shows the dead attempt', async () => {
    const [e] = await list();
    for (const ref of [e?.id as string, e?.key as string]) {
      const shown = JSON.parse((await run('show', ref, '--json')).out) as DeadDetail[];
      expect(shown.map((d) => d.id)).toEqual([e?.id]);
      expect(JSON.parse(shown[0]?.payload ?? '{}')).toEqual({ schedule: 'nightly-export', tick: e?.receivedAt });
    }
    const text = await run('show', e?.id as string);
    expect(text.out).toContain('queue schedules');
    expect(text.out).toContain(`  trace:     switchyard trace ${e?.key}\n`);
    const io = memoryIo(env);
    expect(await traceCommand.run([e?.key as string], io)).toBe(0);
    expect(io.out()).toMatch(/nightly-export {2}attempt 1 \(job repeat:nightly-export:\d+\) {2}→ DEAD \(dead-lettered\)/);
    expect(io.out()).toMatch(/UnrecoverableError: export target unreachable\n\s+\(no API calls\)/);
  });

  // The metrics read the service's queue list, the one the dashboard (/admin) is given.
  it('the timed queues are counted in the queue metrics (and shown in the dashboard)', async () => {
    const s = parseSamples(await p.service.metrics.scrape());
    expect(valueOf(s, 'switchyard_queue_jobs', { queue: 'schedules', state: 'failed' })).toBe(1);
    expect(valueOf(s, 'switchyard_queue_jobs', { queue: 'polls', state: 'failed' })).toBe(0);
    expect(valueOf(s, 'switchyard_queue_jobs', { queue: 'reconcile', state: 'failed' })).toBe(0);
  });

  it('dlq retry runs the same tick again (same key, so the same Idempotency-Keys and steps) and it leaves the dead letters', async () => {
    const [e] = await list();
    g.__syScheduleCured = true;
    const r = await run('retry', '--queue', 'schedules');
    expect(r.out).toContain('1 job moved back to waiting');
    await waitFor(() => (g.__syScheduleRuns?.length ?? 0) === 1, 10_000, 50);
    expect(g.__syScheduleRuns).toEqual([{ tick: e?.receivedAt, key: e?.key }]);
    expect(await list()).toHaveLength(0);
  });
});
