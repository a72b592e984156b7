/** A schedule's run sees the workspace of the `schedules` queue it runs from (`ctx.workspace`), `default` without one. */
import { describe, expect, test } from 'vitest';
import { defineSchedule, type HandlerWorkspace } from '../../../../src/index.js';
import { HandlerSet, handlerSnapshot } from '../../../../src/handler/set.js';
import { createScheduleProcessor, type ScheduleProcessorDeps } from '../../../../src/sources/schedule/processor.js';
import { MemoryStepStore } from '../../../../src/worker/steps.js';
import { memoryLogger } from '../../../support/service.js';

const TICK = Date.parse('2025-03-03T08:00:00.000Z');

async function seen(workspace: ScheduleProcessorDeps['workspace']): Promise<{ workspace: HandlerWorkspace; tick: string }> {
  let got: { workspace: HandlerWorkspace; tick: string } | undefined;
  const s = defineSchedule({
    id: 'digest',
    every: '1h',
    handle: (ctx) => {
      got = { workspace: ctx.workspace, tick: ctx.tick };
    },
  });
  const run = createScheduleProcessor({
    set: new HandlerSet(handlerSnapshot([], undefined, {}, [s])),
    api: undefined,
    steps: new MemoryStepStore(),
    log: memoryLogger().log,
    ...(workspace ? { workspace } : {}),
  });
  const decision = await run({ id: `repeat:digest:${TICK}`, data: { scheduleId: 'digest' }, timestamp: TICK, delay: 0, attemptsMade: 0 });
  expect(decision.kind).toBe('completed');
  return got!;
}

describe("a schedule's ctx.workspace", () => {
  test('is the workspace its processor serves, beside ctx.tick', async () => {
    expect(await seen({ id: 'acme' })).toEqual({ workspace: { id: 'acme' }, tick: new Date(TICK).toISOString() });
  });

  test("is 'default' without one", async () => {
    expect((await seen(undefined)).workspace).toEqual({ id: 'default' });
  });

  test('a job of a schedule that does not name this workspace (left from before its `workspaces` changed) is skipped, said so', async () => {
    let ran = 0;
    const s = defineSchedule({ id: 'acme-only', every: '1h', workspaces: ['acme'], handle: () => void ran++ });
    const { log, lines } = memoryLogger();
    const run = createScheduleProcessor({
      set: new HandlerSet(handlerSnapshot([], undefined, {}, [s])),
      api: undefined,
      steps: new MemoryStepStore(),
      log,
      workspace: { id: 'beta' },
    });
    const job = { id: `repeat:acme-only:${TICK}`, data: { scheduleId: 'acme-only' }, timestamp: TICK, delay: 0, attemptsMade: 0 };
    expect(await run(job)).toEqual({ kind: 'completed', result: { ms: 0 } });
    expect(ran).toBe(0);
    expect(lines.join('')).toContain('a run of a schedule in a workspace it does not name; skipped');
  });
});
