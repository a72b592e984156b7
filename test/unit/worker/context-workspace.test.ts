/** `ctx.workspace`: the handler processor gives every run the workspace it was made for (`default` without one). */
import { describe, expect, test } from 'vitest';
import { defineHandler, type HandlerWorkspace } from '../../../src/handler/define.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { createHandlerProcessor, type HandlerProcessorDeps } from '../../../src/worker/processor.js';
import { MemoryStepStore } from '../../../src/worker/steps.js';
import { memoryLogger } from '../../support/service.js';

const data: HandlerJobData = {
  key: 'evt_ws_1',
  handlerId: 'h',
  receivedAt: '2026-06-01T11:59:59Z',
  event: {
    id: 'evt_ws_1',
    name: 'lead.won',
    createdAt: null,
    data: { id: 1, contact_id: 2, name: 'n', value: null, source: null, outcome: 'won' },
  },
};

/** Runs one job through a processor made with `workspace`; what the handler saw as ctx.workspace. */
async function seen(workspace: HandlerProcessorDeps['workspace']): Promise<HandlerWorkspace[]> {
  const got: HandlerWorkspace[] = [];
  const h = defineHandler({ id: 'h', on: ['lead.won'], handle: (_e, ctx) => void got.push(ctx.workspace) });
  const run = createHandlerProcessor({
    set: new HandlerSet(handlerSnapshot([h], undefined, {})),
    api: undefined,
    steps: new MemoryStepStore(),
    log: memoryLogger().log,
    ...(workspace ? { workspace } : {}),
  });
  for (const id of ['job-1', 'job-2']) {
    expect((await run({ id, data, timestamp: Date.now(), attemptsMade: 0, attempts: 3 })).kind).toBe('completed');
  }
  return got;
}

describe('ctx.workspace', () => {
  test('is the workspace the processor serves, the same frozen object for each of its runs', async () => {
    const [first, second] = await seen({ id: 'acme' });
    expect(first).toEqual({ id: 'acme' });
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  test("is 'default' in a deployment of one (no workspace given)", async () => {
    expect(await seen(undefined)).toEqual([{ id: 'default' }, { id: 'default' }]);
  });
});
