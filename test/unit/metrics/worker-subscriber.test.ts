import { describe, expect, it } from 'vitest';
import { LifecycleBus } from '../../../src/lifecycle/bus.js';
import type { ApiCallFacts, AttemptRef, DeliveryFacts } from '../../../src/lifecycle/events.js';
import { workerSubscriber, type WorkerRecorder } from '../../../src/metrics/worker-subscriber.js';

const ref = (over: Partial<AttemptRef> = {}): AttemptRef => ({
  kind: 'handler',
  queue: 'handlers-high',
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
const delivery = (over: Partial<DeliveryFacts> = {}): DeliveryFacts => ({
  key: 'evt_1',
  name: 'lead.won',
  receivedAt: '2026-06-01T12:00:00Z',
  queuedAt: 1,
  secretIndex: 0,
  bytes: 10,
  source: 'webhook',
  traceparent: undefined,
  raw: new Uint8Array(),
  job: { queue: 'events', id: '1', attempt: 1 },
  ...over,
});
const call: ApiCallFacts = {
  op: 'contacts.get',
  method: 'GET',
  path: '/contacts/1',
  idempotencyKey: undefined,
  attempt: 1,
  status: 200,
  durationMs: 12,
  rateLimitWaitMs: 0,
  priority: 'normal',
  replayed: false,
  quotaRemaining: 9_000,
  error: undefined,
  willRetry: false,
};

/** The metrics' subscriber on a bus, its hook calls recorded. */
function observed(now: () => number = Date.now) {
  const calls: [string, unknown][] = [];
  const record = (name: keyof WorkerRecorder) => (arg: unknown) => {
    calls.push([name, arg]);
  };
  const recorder: WorkerRecorder = {
    onHandler: record('onHandler'),
    onApiCall: record('onApiCall'),
    onPause: record('onPause'),
    onStart: record('onStart'),
    onSkipped: record('onSkipped'),
    onDebounced: record('onDebounced'),
    onDispatched: record('onDispatched'),
    onWait: record('onWait'),
  };
  return { bus: new LifecycleBus().subscribe(workerSubscriber(recorder, now)), calls };
}

describe('metrics as a lifecycle subscriber: the recorder calls the worker made before', () => {
  it('a handler attempt: queue wait on its first start (priority from its queue), the run, a fold, a skip, a pause', async () => {
    const { bus, calls } = observed();
    await bus.attempt(ref({ waitMs: 40 }), async (o) => {
      o?.folded(2);
      o?.call(call);
      o?.ran({ event: 'lead.won', outcome: 'completed', ms: 7 });
      return { kind: 'completed' as const, result: { ms: 7 } };
    });
    await bus.attempt(ref({ queue: 'handlers', number: 2 }), async (o) => {
      o?.skipped('max_age', 'lead.won');
      return { kind: 'completed' as const, result: { ms: 0, skipped: 'max_age' } };
    });
    await bus.attempt(ref({ queue: 'handlers-low' }), async (o) => {
      o?.ran({ event: 'lead.won', outcome: 'pause', ms: 3 });
      return { kind: 'pause' as const, reason: 'token revoked', code: 'token_revoked', at: '' };
    });
    expect(calls).toEqual([
      ['onStart', { handler: 'h', priority: 'high', waitMs: 40 }],
      ['onApiCall', call],
      ['onDebounced', { handler: 'h', folded: 2 }],
      ['onHandler', { handler: 'h', event: 'lead.won', outcome: 'completed', ms: 7 }],
      ['onSkipped', { handler: 'h', event: 'lead.won', reason: 'max_age' }],
      ['onHandler', { handler: 'h', event: 'lead.won', outcome: 'pause', ms: 3 }],
      ['onPause', 'token revoked'],
    ]);
  });

  it('a schedule run counts its API calls, not a handler run; a call no attempt made (the poller) counts too', async () => {
    const { bus, calls } = observed();
    await bus.attempt(ref({ kind: 'schedule', queue: 'schedules', event: 'schedule' }), async (o) => {
      o?.call(call);
      o?.ran({ event: 'schedule', outcome: 'completed', ms: 1 });
      return { kind: 'completed' as const, result: { ms: 1 } };
    });
    bus.emit({ type: 'api-call', attempt: undefined, call });
    expect(calls).toEqual([
      ['onApiCall', call],
      ['onApiCall', call],
    ]);
  });

  it('fan-out: dispatched (a duplicate change said so) from a placed fan-out only, by the name as received', () => {
    const { bus, calls } = observed();
    bus.emit({
      type: 'fanned-out',
      delivery: delivery(),
      envelope: undefined,
      ok: true,
      runs: [{ id: 'h', placement: 'queued', priority: 'normal' }],
    });
    bus.emit({
      type: 'fanned-out',
      delivery: delivery({ name: null, source: 'reconcile' }),
      envelope: undefined,
      ok: true,
      runs: [],
      duplicateChange: 'c',
    });
    bus.emit({ type: 'fanned-out', delivery: delivery(), envelope: undefined, ok: false, error: new Error('invalid') });
    expect(calls).toEqual([
      ['onDispatched', { event: 'lead.won', source: 'webhook', duplicate: false }],
      ['onDispatched', { event: 'unknown', source: 'reconcile', duplicate: true }],
    ]);
  });

  it('durable waits: begun and ended counted; the lateness of a wake-up only for a run parked in an earlier attempt', async () => {
    let clock = 10_000;
    const { bus, calls } = observed(() => clock);
    const wait = { kind: 'wait' as const, until: 20_000, name: 'nap', wait: 'sleep' as const, waitIds: [] };
    // Attempt 1: the sleep begins and the run parks.
    await bus.attempt(ref(), async (o) => {
      o?.wait({ name: 'nap', kind: 'sleep', dueAt: 20_000 });
      return wait;
    });
    // Woken 300 ms after its due time: the replay reaches the sleep, over.
    clock = 20_300;
    await bus.attempt(ref(), async (o) => {
      o?.wait({ name: 'nap', kind: 'sleep', dueAt: 20_000, outcome: 'due' });
      // A sleep whose time had already passed when it began (sleepUntil in the past) was no wake-up.
      o?.wait({ name: 'late', kind: 'sleep', dueAt: 1_000 });
      o?.wait({ name: 'late', kind: 'sleep', dueAt: 1_000, outcome: 'due' });
      o?.wait({ name: 'reply', kind: 'wait-for-event', dueAt: 90_000, outcome: 'event', event: 'message.received', eventKey: 'evt_2' });
      return { kind: 'completed' as const, result: { ms: 1 } };
    });
    expect(calls.filter(([n]) => n === 'onWait').map(([, a]) => a)).toEqual([
      { handler: 'h', kind: 'sleep', outcome: 'begun' },
      { handler: 'h', kind: 'sleep', outcome: 'due', latenessMs: 300 },
      { handler: 'h', kind: 'sleep', outcome: 'begun' },
      { handler: 'h', kind: 'sleep', outcome: 'due' },
      { handler: 'h', kind: 'wait-for-event', outcome: 'event' },
    ]);
  });
});
