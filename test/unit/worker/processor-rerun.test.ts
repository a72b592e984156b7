/** A re-run's job (`data.rerun`) through the `handlers` job processor, without BullMQ or Redis. */
import { describe, expect, test } from 'vitest';
import type { ApiClient, IdempotencyKeyGenerator } from '../../../src/api/index.js';
import { defineHandler } from '../../../src/handler/define.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { createHandlerProcessor } from '../../../src/worker/processor.js';
import { MemoryStepStore } from '../../../src/worker/steps.js';
import { memoryLogger } from '../../support/service.js';
import type { Priority } from '../../../src/util/index.js';

const data: HandlerJobData = {
  key: 'evt_rerun_1',
  handlerId: 'urgent',
  receivedAt: '2026-06-01T11:59:59Z',
  event: {
    id: 'evt_rerun_1',
    name: 'lead.won',
    createdAt: null,
    data: { id: 1, contact_id: 2, name: 'n', value: null, source: null, outcome: 'won' },
  },
};

describe('a re-run through the processor', () => {
  test("its API calls take slots at low priority, whatever the handler's, and its keys are not the delivery's", async () => {
    const seen: { priority: Priority; key: string }[] = [];
    const urgent = defineHandler({
      id: 'urgent',
      on: ['lead.won'],
      priority: 'high',
      handle: async (_e, ctx) => void ctx.api,
    });
    const { log } = memoryLogger();
    const run = createHandlerProcessor({
      set: new HandlerSet(handlerSnapshot([urgent], undefined, {})),
      api: (keys: IdempotencyKeyGenerator, priority: Priority) => {
        seen.push({ priority, key: keys({ op: 'notes.create', method: 'POST', path: '/conversations/1/notes' }) });
        return {} as ApiClient;
      },
      steps: new MemoryStepStore(),
      log,
    });
    const view = (d: HandlerJobData, id: string) => ({ id, data: d, timestamp: Date.now(), attemptsMade: 0, attempts: 3 });
    await run(view(data, 'd/evt_rerun_1/urgent'));
    await run(view({ ...data, rerun: { id: 'r1', of: 'd/evt_rerun_1/urgent' } }, 'r/evt_rerun_1/urgent/r1'));
    expect(seen.map((s) => s.priority)).toEqual(['high', 'low']);
    expect(seen[1]?.key).not.toBe(seen[0]?.key);
  });
});
