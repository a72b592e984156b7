import { describe, expect, it } from 'vitest';
import { createFairPools, currentFairSlot, fairProcessor } from '../../../src/worker/fair.js';

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A processor whose runs wait until released by hand; records which run started. */
function gated(started: string[]) {
  const gates = new Map<string, () => void>();
  const processor = (label: string): Promise<string> =>
    new Promise((resolve) => {
      started.push(label);
      gates.set(label, () => resolve(label));
    });
  return { processor, finish: (label: string) => gates.get(label)?.() };
}

describe('fairProcessor', () => {
  it('a lone workspace uses every slot of its priority', async () => {
    const pools = createFairPools(3);
    const started: string[] = [];
    const g = gated(started);
    const run = fairProcessor(pools, 'normal', { id: 'a', weight: 1 }, g.processor);
    const runs = ['a0', 'a1', 'a2', 'a3'].map((l) => run(l));
    await settle();
    expect(started).toEqual(['a0', 'a1', 'a2']);
    g.finish('a0');
    await settle();
    expect(started).toEqual(['a0', 'a1', 'a2', 'a3']);
    for (const l of ['a1', 'a2', 'a3']) g.finish(l);
    await Promise.all(runs);
    expect(pools.pool('normal').free).toBe(3);
  });

  it("a late workspace's run starts at the next free slot, ahead of another's backlog", async () => {
    const pools = createFairPools(2);
    const started: string[] = [];
    const g = gated(started);
    const runA = fairProcessor(pools, 'normal', { id: 'a', weight: 1 }, g.processor);
    const runB = fairProcessor(pools, 'normal', { id: 'b', weight: 1 }, g.processor);
    const runs = ['a0', 'a1', 'a2', 'a3', 'a4'].map((l) => runA(l));
    await settle();
    runs.push(runB('b0'));
    g.finish('a0');
    await settle();
    expect(started).toEqual(['a0', 'a1', 'b0']);
    for (const l of ['a1', 'b0', 'a2', 'a3', 'a4']) {
      g.finish(l);
      await settle();
    }
    await Promise.all(runs);
  });

  it('pools of different priorities are separate', async () => {
    const pools = createFairPools(1);
    const started: string[] = [];
    const g = gated(started);
    const high = fairProcessor(pools, 'high', { id: 'a', weight: 1 }, g.processor);
    const low = fairProcessor(pools, 'low', { id: 'a', weight: 1 }, g.processor);
    const runs = [high('h0'), high('h1'), low('l0')];
    await settle();
    expect(started).toEqual(['h0', 'l0']);
    g.finish('h0');
    await settle();
    expect(started).toEqual(['h0', 'l0', 'h1']);
    g.finish('h1');
    g.finish('l0');
    await Promise.all(runs);
  });

  it('gives the slot back when the processor throws', async () => {
    const pools = createFairPools(1);
    const failing = fairProcessor(pools, 'normal', { id: 'a', weight: 1 }, () => Promise.reject(new Error('handler failed')));
    await expect(failing()).rejects.toThrow('handler failed');
    await expect(failing()).rejects.toThrow('handler failed');
    expect(pools.pool('normal').free).toBe(1);
    const ok = fairProcessor(pools, 'normal', { id: 'b', weight: 1 }, async () => 'done');
    await expect(ok()).resolves.toBe('done');
  });

  it('the run reaches its slot; giving it up lets another workspace run, and it is back before the run goes on', async () => {
    const pools = createFairPools(1);
    const order: string[] = [];
    const runA = fairProcessor(pools, 'normal', { id: 'a', weight: 1 }, async () => {
      const slot = currentFairSlot();
      expect(slot?.held).toBe(true);
      slot?.pause();
      await new Promise((r) => setTimeout(r, 20));
      await slot?.resume();
      order.push(`a resumed holding=${String(slot?.held)}`);
    });
    const runB = fairProcessor(pools, 'normal', { id: 'b', weight: 1 }, async () => {
      order.push('b ran');
    });
    const a = runA();
    await settle();
    await Promise.all([runB(), a]);
    expect(order).toEqual(['b ran', 'a resumed holding=true']);
    expect(currentFairSlot()).toBeUndefined();
    expect(pools.pool('normal').free).toBe(1);
  });
});
