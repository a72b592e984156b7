import { describe, expect, it } from 'vitest';
import { LifecycleBus, type AttemptObserver, type Scope } from '../../../src/lifecycle/bus.js';
import type { AttemptRef, LifecycleEvent } from '../../../src/lifecycle/events.js';

const ref = (over: Partial<AttemptRef> = {}): AttemptRef => ({
  kind: 'handler',
  queue: 'handlers',
  jobId: 'd/evt_1/h',
  key: 'evt_1',
  handler: 'h',
  event: 'lead.won',
  number: 1,
  attempts: 3,
  startedAt: 1_000,
  traceparent: undefined,
  ...over,
});

describe('lifecycle bus', () => {
  it('delivers each event to the subscribers of its type, in subscription order; a throwing subscriber does not stop the others', () => {
    const seen: string[] = [];
    const bus = new LifecycleBus()
      .subscribe({
        step: (e) => seen.push(`a:${e.name}:${e.state}`),
        'api-call': () => {
          throw new Error('broken observer');
        },
      })
      .subscribe(undefined)
      .subscribe({
        step: () => {
          throw new Error('broken too');
        },
        'api-call': (e) => seen.push(`b:${e.call.op}`),
      })
      .subscribe({ step: (e) => seen.push(`c:${e.name}`) });
    expect(bus.active).toBe(true);
    expect(bus.wants('step')).toBe(true);
    expect(bus.wants('wait')).toBe(false);
    bus.emit({ type: 'step', attempt: ref(), name: 'create', state: 'started' });
    bus.emit({
      type: 'api-call',
      attempt: undefined,
      call: {
        op: 'notes.create',
        method: 'POST',
        path: '/notes',
        idempotencyKey: undefined,
        attempt: 1,
        status: 201,
        durationMs: 3,
        rateLimitWaitMs: 0,
        priority: 'normal',
        replayed: false,
        quotaRemaining: undefined,
        error: undefined,
        willRetry: false,
      },
    });
    bus.emit({ type: 'wait', attempt: ref(), name: 'nap', kind: 'sleep', dueAt: 5_000 });
    expect(seen).toEqual(['a:create:started', 'c:create', 'b:notes.create']);
  });

  it('with no subscriber, an attempt runs without an observer and within() runs its work directly', async () => {
    const bus = new LifecycleBus();
    expect(bus.active).toBe(false);
    let observer: AttemptObserver | undefined | 'unset' = 'unset';
    const d = await bus.attempt(ref(), async (o) => {
      observer = o;
      return { kind: 'completed' as const, result: { ms: 1 } };
    });
    expect(d).toEqual({ kind: 'completed', result: { ms: 1 } });
    expect(observer).toBeUndefined();
    expect(bus.within({ type: 'attempt-started', attempt: ref() }, () => 42)).toBe(42);
  });

  it('an attempt: started (run in the scopes its subscribers return, the first outermost), calls and steps tagged with it, ended with the decision and what the processor noted', async () => {
    const order: string[] = [];
    const events: LifecycleEvent[] = [];
    const scope = (name: string): Scope => ({
      run: (fn) => {
        order.push(`enter ${name}`);
        try {
          return fn();
        } finally {
          order.push(`leave ${name}`);
        }
      },
    });
    const bus = new LifecycleBus()
      .subscribe({ 'attempt-started': () => scope('outer'), 'attempt-ended': (e) => events.push(e) })
      .subscribe({ 'attempt-started': () => undefined, step: (e) => events.push(e), 'api-call': (e) => events.push(e) })
      .subscribe({ 'attempt-started': () => scope('inner') });
    const a = ref({ number: 2 });
    const decision = await bus.attempt(a, async (o) => {
      order.push('run');
      o?.step('create', 'started');
      o?.call({
        op: 'notes.create',
        method: 'POST',
        path: '/notes',
        idempotencyKey: 'k',
        attempt: 1,
        status: 201,
        durationMs: 3,
        rateLimitWaitMs: 0,
        priority: 'normal',
        replayed: false,
        quotaRemaining: undefined,
        error: undefined,
        willRetry: false,
      });
      o?.step('create', 'done');
      o?.ran({ event: 'lead.won', outcome: 'retry', ms: 12 });
      o?.folded(2);
      return { kind: 'retry' as const, error: new Error('boom') };
    });
    expect(decision.kind).toBe('retry');
    expect(order).toEqual(['enter outer', 'enter inner', 'run', 'leave inner', 'leave outer']);
    expect(events.map((e) => e.type)).toEqual(['step', 'api-call', 'step', 'attempt-ended']);
    for (const e of events) expect((e as { attempt: AttemptRef }).attempt).toBe(a);
    const ended = events[3] as Extract<LifecycleEvent, { type: 'attempt-ended' }>;
    expect(ended).toMatchObject({
      ok: true,
      decision: { kind: 'retry' },
      run: { event: 'lead.won', outcome: 'retry', ms: 12 },
      folded: 2,
      skipped: undefined,
    });
    expect(ended.endedAt).toBeGreaterThan(0);
  });

  it('a processor that throws ends its attempt with the error, and the error goes on to the caller', async () => {
    const ended: LifecycleEvent[] = [];
    const bus = new LifecycleBus().subscribe({ 'attempt-ended': (e) => ended.push(e) });
    const boom = new Error('redis down');
    await expect(
      bus.attempt(ref(), async (o) => {
        o?.skipped('stale', 'lead.won');
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(ended).toEqual([
      expect.objectContaining({
        type: 'attempt-ended',
        ok: false,
        error: boom,
        skipped: { reason: 'stale', event: 'lead.won' },
        run: undefined,
      }),
    ]);
  });
});
