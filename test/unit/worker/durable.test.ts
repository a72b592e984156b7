import { describe, expect, it } from 'vitest';
import { parseBusinessHours } from '../../../src/recipes/business-hours.js';
import { DurableRun, ParkSignal, type DurableDeps } from '../../../src/worker/durable.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { DEFAULT_STATE_TTL_MS } from '../../../src/handler/workflow-policy.js';
import { HandlerConfigError } from '../../../src/handler/errors.js';
import { decodeReached } from '../../../src/queue/waits/reached.js';

const data: HandlerJobData = {
  key: 'evt_1',
  handlerId: 'h',
  receivedAt: '2026-11-27T16:30:00.000Z',
  event: { id: 'evt_1', name: 'message.received', createdAt: '2026-11-27T16:30:00.000Z', data: { conversation_id: 42 } },
};
const unused = new Proxy(
  {},
  {
    get: () => {
      throw new Error('not used by sleeps');
    },
  },
);
const deps = (now: number): DurableDeps => ({
  records: unused as DurableDeps['records'],
  waits: unused as DurableDeps['waits'],
  state: unused as DurableDeps['state'],
  keepMs: 1000,
  now: () => now,
});
const handler = (state: { key: 'conversation'; ttlMs: number } | null = null) => ({
  id: 'h',
  workflow: { cancelOn: [], state, waitsFor: [] },
});

async function parked(p: Promise<unknown>): Promise<void> {
  await expect(p).rejects.toBeInstanceOf(ParkSignal);
}

describe('DurableRun (sleeps without Redis)', () => {
  it('a business-hours sleep is due after that much open time (Friday 16:30 + 1 h of Mon-Fri 09-17 Berlin → Monday 09:30)', async () => {
    const now = Date.parse('2026-11-27T15:30:00Z'); // Friday 16:30 in Berlin (UTC+1)
    const run = new DurableRun(deps(now), handler(), data, 'handlers|j', new Map(), undefined);
    await parked(run.sleep('followup', '1h', { businessHours: parseBusinessHours('Mon-Fri 09:00-17:00 Europe/Berlin') }));
    expect(new Date(run.parked?.dueAt ?? 0).toISOString()).toBe('2026-11-30T08:30:00.000Z');
    expect(decodeReached(run.fresh.get('t:followup') ?? '', run.scope, 'followup')).toEqual({
      k: 'sleep',
      due: Date.parse('2026-11-30T08:30:00Z'),
    });
  });

  it('a replay parks until the due time fixed at the first reach, and returns once it passed', async () => {
    const t0 = 1_000_000;
    const first = new DurableRun(deps(t0), handler(), data, 'handlers|j', new Map(), undefined);
    await parked(first.sleep('nap', '10m', undefined));
    const record = new Map(first.fresh);
    const early = new DurableRun(deps(t0 + 5 * 60_000), handler(), data, 'handlers|j', record, undefined);
    await parked(early.sleep('nap', '10m', undefined));
    expect(early.parked?.dueAt).toBe(t0 + 10 * 60_000);
    const late = new DurableRun(deps(t0 + 10 * 60_000), handler(), data, 'handlers|j', record, undefined);
    await expect(late.sleep('nap', '10m', undefined)).resolves.toBeUndefined();
    expect(late.fresh.get('o:nap')).toBe('{"r":"due"}');
    expect(late.parked).toBeNull();
  });

  it('once parked, any further ctx call throws the signal again; a name reached twice is a TypeError', async () => {
    const run = new DurableRun(deps(0), handler(), data, 'handlers|j', new Map(), undefined);
    await parked(run.sleep('a', 1000, undefined));
    await parked(run.sleepUntil('b', 5000, undefined));
    expect(() => run.guard()).toThrow(ParkSignal);
    const other = new DurableRun(deps(0), handler(), data, 'handlers|j', new Map([['o:a', '{"r":"due"}']]), undefined);
    await other.sleep('a', 1000, undefined);
    await expect(other.sleep('a', 1000, undefined)).rejects.toThrow(/reached twice/);
  });

  it('ctx.state without a state key is HandlerConfigError naming the handler; API write memory answers by key', async () => {
    const run = new DurableRun(deps(0), handler(), data, 'handlers|j', new Map(), undefined);
    await expect(run.stateGet()).rejects.toBeInstanceOf(HandlerConfigError);
    await expect(run.stateGet()).rejects.toThrow(/handler "h"/);
    run.memo.set('sy_k', { json: { data: { id: 1 } }, status: 201, requestId: 'r1' });
    const replay = new DurableRun(
      deps(0),
      handler({ key: 'conversation', ttlMs: DEFAULT_STATE_TTL_MS }),
      data,
      'handlers|j',
      new Map(run.fresh),
      undefined,
    );
    expect(replay.memo.get('sy_k')).toEqual({ json: { data: { id: 1 } }, status: 201, requestId: 'r1' });
    expect(replay.memo.get('sy_other')).toBeUndefined();
  });

  it('parkedIn: the sleep or wait a resumed run parked in (none once it is over), with its first hold', async () => {
    const t0 = 1_000_000;
    const first = new DurableRun(deps(t0), handler(), data, 'handlers|j', new Map(), undefined);
    await parked(first.sleep('nap', '10m', undefined));
    const record = new Map(first.fresh);
    expect(new DurableRun(deps(t0), handler(), data, 'handlers|j', new Map(), undefined).parkedIn()).toBeNull();
    expect(new DurableRun(deps(t0), handler(), data, 'handlers|j', record, undefined).parkedIn()).toEqual({
      name: 'nap',
      kind: 'sleep',
      dueAt: t0 + 600_000,
    });
    const held = new DurableRun(deps(t0), handler(), data, 'handlers|j', record, undefined);
    held.holding('nap', t0 + 600_100);
    expect(
      new DurableRun(deps(t0), handler(), data, 'handlers|j', new Map([...record, ...held.fresh]), undefined).parkedIn(),
    ).toMatchObject({ heldSince: t0 + 600_100 });
    expect(
      new DurableRun(deps(t0), handler(), data, 'handlers|j', new Map([...record, ['o:nap', '{"r":"due"}']]), undefined).parkedIn(),
    ).toBeNull();
  });
});
