import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../../src/handler/index.js';
import type { HandlerJobData } from '../../../src/queue/index.js';
import { DurableRun, type DurableDeps } from '../../../src/worker/durable.js';
import { createFairPools, currentFairSlot, fairProcessor } from '../../../src/worker/fair.js';

// While a run's `ctx.state.update` function runs, the run holds the key's lock and other runs of the key wait for
// it with their slots: the run's own slot is pinned there, so an API call inside the update that waits for the
// budget does not give it up (it could never get one back from the waiters).

describe('ctx.state.update and the run’s fair-pool slot', () => {
  it('keeps the slot while the update function runs, and lets it go again after', async () => {
    const handler = defineHandler({ id: 'counter', on: ['message.received'], state: { key: 'conversation' }, handle: () => undefined });
    const data = {
      key: 'evt_1',
      handlerId: 'counter',
      receivedAt: new Date().toISOString(),
      event: { id: 'evt_1', name: 'message.received', createdAt: null, data: { id: 1, conversation_id: 38 } },
    } as HandlerJobData;
    const stored = new Map<string, unknown>();
    const state = {
      update: async (_h: string, key: string, fn: (current: unknown) => Promise<unknown>) => {
        const v = await fn(stored.get(key));
        stored.set(key, v);
        return v;
      },
    };
    const deps = { records: {}, waits: {}, state, keepMs: 60_000 } as unknown as DurableDeps;
    const pools = createFairPools(1);
    const seen: boolean[] = [];
    await fairProcessor(pools, 'normal', { id: 'acme', weight: 1 }, async () => {
      const run = new DurableRun(deps, handler, data, 'handlers|d/evt_1/counter', new Map(), undefined);
      await run.stateWrite('update', () => {
        const slot = currentFairSlot();
        slot?.pause(); // what an API call waiting for the budget does
        seen.push(slot?.held ?? false);
        return 1;
      });
      const slot = currentFairSlot();
      slot?.pause();
      seen.push(slot?.held ?? true);
      await slot?.resume();
    })();
    expect(seen).toEqual([true, false]);
    expect(stored.get('conversation:38') ?? [...stored.values()][0]).toBe(1);
  });
});
