import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { parseEnvelope } from '../../../src/events/envelope.js';
import { historyObserver } from '../../../src/history/observe.js';
import { readTrace, type Trace } from '../../../src/history/read.js';
import { formatTrace } from '../../../src/history/timeline.js';
import { historyKeys } from '../../../src/history/keys.js';
import type { AttemptEntry } from '../../../src/history/record.js';
import { LifecycleBus } from '../../../src/lifecycle/bus.js';
import type { ApiCallFacts, AttemptRef, DeliveryFacts } from '../../../src/lifecycle/events.js';
import { eventBody } from '../../support/events.js';
import { memoryLogger } from '../../support/service.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { waitFor } from '../../support/wait.js';

/*
 * The history subscriber on its own: a given sequence of lifecycle events
 * writes what the worker's history wrote for the same run before the stream
 * (the entries `trace` shows; test/integration/history covers it end to end).
 */

const RECEIVED = '2026-06-01T12:00:00.000Z';
const body = eventBody(
  'message.received',
  {
    id: 5,
    conversation_id: 812,
    type: 'message',
    direction: 'inbound',
    sender_type: 'contact',
    user_id: null,
    body: 'hi',
    content_type: 'text',
    status: null,
    created_at: RECEIVED,
  },
  { id: 'evt_obs_1', createdMs: Date.parse(RECEIVED) },
);
const raw = Buffer.from(body);
const call: ApiCallFacts = {
  op: 'contacts.get',
  method: 'GET',
  path: '/contacts/email:maria%40example.org',
  idempotencyKey: undefined,
  attempt: 1,
  status: 200,
  durationMs: 12.4,
  rateLimitWaitMs: 3.2,
  priority: 'normal',
  replayed: false,
  quotaRemaining: undefined,
  error: undefined,
  willRetry: false,
};

describe('history as a lifecycle subscriber (real redis-server)', () => {
  const prefix = uniquePrefix('hist-obs');
  let redis: Redis;
  let bus: LifecycleBus;

  beforeAll(() => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    const config = loadConfig({ QUEUE_PREFIX: prefix, HISTORY: 'on' });
    bus = new LifecycleBus().subscribe(historyObserver(config, redis, memoryLogger().log)?.subscriber);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const ref = (over: Partial<AttemptRef>): AttemptRef => ({
    kind: 'handler',
    queue: 'handlers',
    jobId: 'd/evt_obs_1/notes',
    key: 'evt_obs_1',
    handler: 'notes',
    event: 'message.received',
    number: 1,
    attempts: 3,
    startedAt: Date.now(),
    traceparent: undefined,
    ...over,
  });
  const traced = (key: string, done: (t: Trace) => boolean) =>
    waitFor(async () => {
      const t = await readTrace(redis, prefix, key);
      return t && done(t) ? t : null;
    });
  const attempts = (t: Trace) => t.entries.filter((e): e is AttemptEntry => e.kind === 'attempt');

  it('receipt and fan-out (from the envelope the worker parsed), then attempts with steps, calls and outcomes', async () => {
    const delivery: DeliveryFacts = {
      key: 'evt_obs_1',
      name: 'message.received',
      receivedAt: RECEIVED,
      queuedAt: Date.parse(RECEIVED) + 5,
      secretIndex: 1,
      bytes: raw.byteLength,
      source: 'webhook',
      traceparent: undefined,
      raw,
      job: { queue: 'events', id: '1', attempt: 1 },
    };
    bus.within({ type: 'received', delivery }, () => undefined);
    bus.emit({
      type: 'fanned-out',
      delivery,
      envelope: parseEnvelope(raw),
      ok: true,
      runs: [
        { id: 'notes', placement: 'queued', priority: 'normal' },
        { id: 'digest', placement: 'debounced', priority: 'low' },
      ],
    });

    // First attempt: a stored step, one that ran, one that never finished; a call; then a retry.
    await bus.attempt(ref({}), async (o) => {
      o?.step('lookup', 'stored');
      o?.step('create', 'started');
      o?.call(call);
      o?.step('create', 'done');
      o?.step('notify', 'started');
      o?.ran({ event: 'message.received', outcome: 'retry', ms: 20 });
      return { kind: 'retry' as const, error: new TypeError('boom for maria@example.org') };
    });
    // Handed back without running (its handler runs elsewhere): not an attempt.
    await bus.attempt(ref({ number: 2 }), async () => ({ kind: 'delay' as const, until: Date.now() + 1_000 }));
    // A 429 after the handler ran: an attempt with a delay.
    await bus.attempt(ref({ number: 2 }), async (o) => {
      o?.ran({ event: 'message.received', outcome: 'delay', ms: 5 });
      return { kind: 'delay' as const, until: Date.parse('2026-06-01T12:05:00.000Z') };
    });
    // A debounced burst's job (its own id): skipped.
    await bus.attempt(ref({ handler: 'digest', jobId: 'burst-7' }), async (o) => {
      o?.skipped('burst_gone', 'message.received');
      return { kind: 'completed' as const, result: { ms: 0, skipped: 'burst_gone' } };
    });
    // The processor failed (Redis): an error attempt, and the error goes on.
    await expect(
      bus.attempt(ref({ number: 3 }), async () => {
        throw new Error('connection lost');
      }),
    ).rejects.toThrow('connection lost');
    await bus.attempt(ref({ number: 3 }), async (o) => {
      o?.ran({ event: 'message.received', outcome: 'dead', ms: 1 });
      return { kind: 'dead' as const, reason: 'HandlerConfigError: missing setting' };
    });

    const t = await traced('evt_obs_1', (x) => attempts(x).length === 5);
    expect(t).toMatchObject({
      receivedAt: RECEIVED,
      queuedAt: new Date(Date.parse(RECEIVED) + 5).toISOString(),
      bytes: raw.byteLength,
      secretIndex: 1,
      source: 'webhook',
      event: 'message.received',
      conversation: '812',
      state: null,
      handlers: { notes: 'dead', digest: 'skipped' },
    });
    const fanOut = t.entries.find((e) => e.kind === 'fanout');
    expect(fanOut).toMatchObject({
      handlers: [
        { id: 'notes', placement: 'queued', priority: 'normal' },
        { id: 'digest', placement: 'debounced', priority: 'low' },
      ],
    });
    const [first, delayed, skipped, failed, dead] = attempts(t);
    expect(first).toMatchObject({
      handler: 'notes',
      attempt: 1,
      outcome: 'retry',
      error: { class: 'TypeError', message: 'boom for [email]' },
      steps: [
        { name: 'lookup', source: 'stored' },
        { name: 'create', source: 'run' },
        { name: 'notify', source: 'failed' },
      ],
      calls: [
        {
          op: 'contacts.get',
          method: 'GET',
          path: '/contacts/email:[email]',
          status: 200,
          idempotencyKey: null,
          replayed: false,
          ms: 12,
          waitMs: 3,
          try: 1,
        },
      ],
    });
    expect(first?.job).toBeUndefined();
    expect(first?.at).toBeGreaterThanOrEqual(first?.startedAt as number);
    expect(delayed).toMatchObject({
      attempt: 2,
      outcome: 'delay',
      error: { class: 'delay', message: 'run again at 2026-06-01T12:05:00.000Z' },
      steps: [],
      calls: [],
    });
    expect(skipped).toMatchObject({ handler: 'digest', job: 'burst-7', outcome: 'skipped', skipped: 'burst_gone' });
    expect(await redis.get(historyKeys(prefix).job('burst-7'))).toBe('evt_obs_1');
    expect(failed).toMatchObject({ attempt: 3, outcome: 'error', error: { class: 'Error', message: 'connection lost' } });
    expect(dead).toMatchObject({ attempt: 3, outcome: 'dead', error: { class: 'HandlerConfigError', message: 'missing setting' } });
  });

  it('an invalid delivery, and a schedule run recorded as a delivery of its own (a delay counts: a schedule always runs)', async () => {
    const bad = Buffer.from('{"nope": true}');
    const delivery: DeliveryFacts = {
      key: 'evt_obs_bad',
      name: null,
      receivedAt: RECEIVED,
      queuedAt: Date.parse(RECEIVED),
      secretIndex: 0,
      bytes: bad.byteLength,
      source: 'webhook',
      traceparent: undefined,
      raw: bad,
      job: { queue: 'events', id: '2', attempt: 1 },
    };
    bus.emit({
      type: 'fanned-out',
      delivery,
      envelope: parseEnvelope(bad),
      ok: false,
      error: Object.assign(new Error('missing_event_name: no event name'), { code: 'invalid_delivery' }),
    });
    // Any other failure of fan-out (Redis) is retried: nothing recorded.
    bus.emit({
      type: 'fanned-out',
      delivery: { ...delivery, key: 'evt_obs_retried' },
      envelope: undefined,
      ok: false,
      error: new Error('connection lost'),
    });

    const tick = Date.parse('2026-06-01T13:00:00.000Z');
    const key = `schedule:nightly:${new Date(tick).toISOString()}`;
    await bus.attempt(
      ref({ kind: 'schedule', queue: 'schedules', jobId: 'repeat:nightly:1', key, handler: 'nightly', event: 'schedule', tick }),
      async () => ({ kind: 'delay' as const, until: tick + 60_000 }),
    );

    const invalid = await traced('evt_obs_bad', (x) => x.entries.length > 0);
    expect(invalid).toMatchObject({ state: 'invalid', event: null, bytes: bad.byteLength });
    expect(invalid.entries).toEqual([expect.objectContaining({ kind: 'invalid', reason: 'missing_event_name: no event name' })]);
    const run = await traced(key, (x) => attempts(x).length === 1);
    expect(run).toMatchObject({
      source: 'schedule',
      event: 'schedule',
      receivedAt: new Date(tick).toISOString(),
      handlers: { nightly: 'delay' },
    });
    expect(attempts(run)[0]).toMatchObject({ handler: 'nightly', job: 'repeat:nightly:1', outcome: 'delay' });
    expect(await readTrace(redis, prefix, 'evt_obs_retried')).toBeNull();
  });

  it('entries in the order trace shows them: the fan-out at its start, before the runs it placed, and each attempt at its start', async () => {
    // A placed run may start, and even end, before fan-out ends (the worker emits fanned-out after placing every run):
    // the trial printed an attempt at +72 ms before the fan-out at +119 ms.
    const delivery: DeliveryFacts = {
      key: 'evt_obs_order',
      name: 'message.received',
      receivedAt: new Date().toISOString(),
      queuedAt: Date.now(),
      secretIndex: 0,
      bytes: raw.byteLength,
      source: 'webhook',
      traceparent: undefined,
      raw,
      job: { queue: 'events', id: '9', attempt: 1 },
    };
    const before = Date.now();
    await bus.within({ type: 'received', delivery }, async () => {
      const run = (handler: string, startedAt: number) =>
        bus.attempt(ref({ key: 'evt_obs_order', jobId: `d/evt_obs_order/${handler}`, handler, startedAt }), async (o) => {
          o?.ran({ event: 'message.received', outcome: 'completed', ms: 1 });
          return { kind: 'completed' as const, result: { ms: 1 } };
        });
      // "late" started first and ends last; "early" started after it and ends first.
      await run('early', before + 60);
      await run('late', before + 50);
      bus.emit({
        type: 'fanned-out',
        delivery,
        envelope: parseEnvelope(raw),
        ok: true,
        runs: [
          { id: 'late', placement: 'queued', priority: 'normal' },
          { id: 'early', placement: 'queued', priority: 'normal' },
        ],
      });
    });
    const t = await traced('evt_obs_order', (x) => attempts(x).length === 2 && x.entries.some((e) => e.kind === 'fanout'));
    expect(t.entries.map((e) => (e.kind === 'attempt' ? e.handler : e.kind))).toEqual(['fanout', 'late', 'early']);
    const fanOut = t.entries[0]!;
    expect(fanOut.at).toBeGreaterThanOrEqual(before);
    expect(fanOut.at).toBeLessThanOrEqual(before + 50);
    // The lines of `trace`, each `+N ms  what`: in this order, their times never going back.
    const shown = formatTrace(t)
      .split('\n')
      .filter((l) => /^ {2}[+-]\d+ ms/.test(l))
      .map((l) => /^ {2}([+-]\d+) ms\s+(\S+)/.exec(l)!.slice(1));
    expect(shown.map(([, what]) => what)).toEqual(['received', 'queued', 'fan-out:', 'late', 'early']);
    const times = shown.map(([ms]) => Number(ms));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });
});
