/** A re-run job (data.rerun) takes its API client from the re-runs' factory (RERUN_SHARE), at low priority; a live run does not. */
import { describe, expect, test } from 'vitest';
import type { ApiClient } from '../../../src/api/index.js';
import { defineHandler } from '../../../src/handler/define.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { createHandlerProcessor } from '../../../src/worker/processor.js';
import { MemoryStepStore } from '../../../src/worker/steps.js';
import { memoryLogger } from '../../support/service.js';

const data: HandlerJobData = {
  key: 'evt_rr_1',
  handlerId: 'h',
  receivedAt: '2026-06-01T11:59:59Z',
  event: {
    id: 'evt_rr_1',
    name: 'lead.won',
    createdAt: null,
    data: { id: 1, contact_id: 2, name: 'n', value: null, source: null, outcome: 'won' },
  },
};

describe('the API client of a re-run', () => {
  test("a re-run job builds its client with the re-runs' factory at low priority; a live one with the live factory at its handler's", async () => {
    const built: { factory: string; priority: string }[] = [];
    const factory = (name: string) => (_keys: unknown, priority: string) => {
      built.push({ factory: name, priority });
      return { contacts: { get: async () => ({ id: 2 }) } } as unknown as ApiClient;
    };
    const h = defineHandler({
      id: 'h',
      on: ['lead.won'],
      priority: 'high',
      handle: async (_e, ctx) => {
        await ctx.api.contacts.get(2);
      },
    });
    const run = createHandlerProcessor({
      set: new HandlerSet(handlerSnapshot([h], undefined, {})),
      api: factory('live'),
      rerunApi: factory('rerun'),
      steps: new MemoryStepStore(),
      log: memoryLogger().log,
    });
    const view = (d: HandlerJobData, id: string) => ({ id, data: d, timestamp: Date.now(), attemptsMade: 0, attempts: 3 });
    await run(view(data, 'd/evt_rr_1/h'));
    await run(view({ ...data, rerun: { id: 'rr-x-0000.0', of: 'd/evt_rr_1/h', batch: 'rr-x-0000' } }, 'r/evt_rr_1/h/rr-x-0000.0'));
    expect(built).toEqual([
      { factory: 'live', priority: 'high' },
      { factory: 'rerun', priority: 'low' },
    ]);
  });
});
