/** The due-time hold's decision (src/worker/hold.ts), on plain ports: what it reads, in which order, and what it decides. */
import { describe, expect, it } from 'vitest';
import { checkDue, HOLD_MAX_MS, holdStep, type PendingDelivery } from '../../../src/worker/hold.js';
import type { ParkedIn } from '../../../src/worker/durable.js';
import type { WaitState } from '../../../src/queue/waits/wait-store.js';

const DUE = 1_000_000;
const wait: ParkedIn = {
  name: 'reply',
  kind: 'wait-for-event',
  dueAt: DUE,
  waitId: 'run:w:reply',
  event: 'message.received',
  key: 'conversation:1',
};
const nap: ParkedIn = { name: 'nap', kind: 'sleep', dueAt: DUE };
const st = (status: WaitState['status']): WaitState => ({ status, key: 'conversation:1', event: 'message.received', run: 'q|1' });

function ports(o: { pending?: PendingDelivery | null; states?: Record<string, WaitState['status']>; now?: number; maxMs?: number }) {
  const reads: string[] = [];
  return {
    reads,
    deps: {
      oldestPending: async () => {
        reads.push('pending');
        return o.pending ?? null;
      },
      states: async (ids: readonly string[]) => {
        reads.push(`states ${ids.join(',')}`);
        return ids.map((id) => {
          const s = o.states?.[id];
          return s ? st(s) : null;
        });
      },
      now: o.now ?? DUE + 10,
      ...(o.maxMs === undefined ? {} : { maxMs: o.maxMs }),
    },
  };
}
const run = (p: ParkedIn | null) => ({ parkedIn: () => p });

describe('checkDue', () => {
  it('a due wait with a delivery received before its due time pending: held (set read first, then the states), from now on', async () => {
    const { reads, deps } = ports({ pending: { key: 'evt_1', at: DUE - 5 }, states: { 'run:w:reply': 'pending' } });
    const d = await checkDue(run(wait), [], deps);
    expect(reads).toEqual(['pending', 'states run:w:reply']);
    expect(d).toEqual({
      kind: 'hold',
      parkedIn: wait,
      pending: { key: 'evt_1', at: DUE - 5 },
      since: DUE + 10,
      until: DUE + 10 + 200,
      waitIds: ['run:w:reply'],
    });
  });

  it('a delivery received after the due time, none pending, or a wait already answered: no hold', async () => {
    expect(
      (await checkDue(run(wait), [], ports({ pending: { key: 'evt_2', at: DUE + 1 }, states: { 'run:w:reply': 'pending' } }).deps)).kind,
    ).toBe('go');
    expect((await checkDue(run(wait), [], ports({ pending: null, states: { 'run:w:reply': 'pending' } }).deps)).kind).toBe('go');
    expect(
      (await checkDue(run(wait), [], ports({ pending: { key: 'evt_1', at: DUE - 5 }, states: { 'run:w:reply': 'matched' } }).deps)).kind,
    ).toBe('go');
    // Its wait answered, its cancelOn entries still pending: it goes on with its event (a hold would only be promoted again at once).
    expect(
      (
        await checkDue(
          run(wait),
          ['run:c:0'],
          ports({ pending: { key: 'evt_1', at: DUE - 5 }, states: { 'run:w:reply': 'matched', 'run:c:0': 'pending' } }).deps,
        )
      ).kind,
    ).toBe('go');
  });

  it('not due yet, or a plain sleep (nothing can answer it): the set is not read at all', async () => {
    const early = ports({ pending: { key: 'evt_1', at: 0 }, states: { 'run:w:reply': 'pending' }, now: DUE - 1 });
    expect((await checkDue(run(wait), [], early.deps)).kind).toBe('go');
    const plain = ports({ pending: { key: 'evt_1', at: 0 } });
    expect((await checkDue(run(nap), [], plain.deps)).kind).toBe('go');
    const never = ports({ pending: { key: 'evt_1', at: 0 } });
    expect((await checkDue(run(null), [], never.deps)).kind).toBe('go');
    expect([...early.reads, ...plain.reads, ...never.reads].filter((r) => r === 'pending')).toEqual([]);
  });

  it('a sleep guarded by cancelOn is held while its entries are pending; a cancelled entry cancels it whatever the set says', async () => {
    const held = await checkDue(
      run(nap),
      ['run:c:0'],
      ports({ pending: { key: 'evt_1', at: DUE }, states: { 'run:c:0': 'pending' } }).deps,
    );
    expect(held).toMatchObject({ kind: 'hold', waitIds: ['run:c:0'] });
    const cancelled = await checkDue(
      run(nap),
      ['run:c:0'],
      ports({ pending: { key: 'evt_1', at: DUE }, states: { 'run:c:0': 'cancelled' } }).deps,
    );
    expect(cancelled).toMatchObject({ kind: 'cancelled', hit: { status: 'cancelled' } });
    // Not due: only the cancel check, as before the hold existed.
    const early = ports({ states: { 'run:c:0': 'cancelled' }, now: DUE - 1 });
    expect(await checkDue(run(nap), ['run:c:0'], early.deps)).toMatchObject({ kind: 'cancelled' });
    expect(early.reads).toEqual(['states run:c:0']);
  });

  it('held since its first hold: the step grows to 2 s; at the cap it goes on, saying what it held for and how long', async () => {
    const since = DUE + 10;
    const later = await checkDue(
      run({ ...wait, heldSince: since }),
      [],
      ports({ pending: { key: 'evt_1', at: DUE }, states: { 'run:w:reply': 'pending' }, now: since + 10_000 }).deps,
    );
    expect(later).toMatchObject({ kind: 'hold', since, until: since + 10_000 + 2_000 });
    const capped = await checkDue(
      run({ ...wait, heldSince: since }),
      [],
      ports({ pending: { key: 'evt_1', at: DUE }, states: { 'run:w:reply': 'pending' }, now: since + HOLD_MAX_MS }).deps,
    );
    expect(capped).toEqual({
      kind: 'go',
      overdue: { parkedIn: { ...wait, heldSince: since }, pending: { key: 'evt_1', at: DUE }, heldMs: HOLD_MAX_MS },
    });
    const shortCap = await checkDue(
      run({ ...wait, heldSince: since }),
      [],
      ports({ pending: { key: 'evt_1', at: DUE }, states: { 'run:w:reply': 'pending' }, now: since + 500, maxMs: 500 }).deps,
    );
    expect(shortCap.kind).toBe('go');
    expect([holdStep(0), holdStep(1_000), holdStep(60_000)]).toEqual([200, 500, 2_000]);
  });
});
