import { describe, expect, it } from 'vitest';
import { defineHandler, defineSchedule, HandlerConfigError, parseBusinessHours, type ScheduleContext } from '../../../src/index.js';
import { createEvent, sandboxClient, testHandler, testSchedule } from '../../../src/testing/index.js';

/**
 * testHandler / testSchedule run workflows on a virtual clock: sleeps and
 * waits end at once, `events` are what waits see (and what `cancelOn` reacts
 * to), `ctx.state` is kept in memory; `waits` and `state` report them.
 */

// Monday 3 March 2025, 16:30 in Berlin (UTC+1): half an hour before closing.
const MONDAY_1630 = new Date('2025-03-03T15:30:00Z');
const HOURS = parseBusinessHours('Mon-Fri 09:00-17:00 Europe/Berlin');
const inbound = createEvent('message.received', { data: { conversation_id: 38 } });
const reply = (conversation = 38) => createEvent('message.sent', { data: { conversation_id: conversation } });
const closed = (conversation = 38) => createEvent('conversation.closed', { data: { id: conversation } });

describe('sleeps on the virtual clock', () => {
  const napper = defineHandler({
    id: 'napper',
    on: ['message.received'],
    async handle(event, ctx) {
      await ctx.sleep('three-days', '3d');
      await ctx.sleep('one-business-hour', '1h', { businessHours: HOURS });
      await ctx.sleepUntil('past', '2000-01-01T00:00:00Z');
      await ctx.sleepUntil('next-opening', '2025-03-08T12:00:00Z', { businessHours: HOURS });
      await ctx.api.notes.create(event.data.conversation_id, { body: 'woke up' });
    },
  });

  it("end at once, in order, business hours counted; a fresh sandbox's clock moves with them", async () => {
    const started = Date.now();
    const run = await testHandler(napper, inbound, { now: MONDAY_1630 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(run.outcome, run.reason).toBe('completed');
    expect(run.waits).toEqual([
      { name: 'three-days', kind: 'sleep', startedAt: '2025-03-03T15:30:00.000Z', due: '2025-03-06T15:30:00.000Z', outcome: 'slept' },
      // Thursday 16:30 Berlin: 30 minutes before closing, 30 after Friday's opening.
      {
        name: 'one-business-hour',
        kind: 'sleep',
        startedAt: '2025-03-06T15:30:00.000Z',
        due: '2025-03-07T08:30:00.000Z',
        outcome: 'slept',
      },
      { name: 'past', kind: 'sleep', startedAt: '2025-03-07T08:30:00.000Z', due: '2025-03-07T08:30:00.000Z', outcome: 'slept' },
      // Saturday noon is closed: the next opening is Monday 09:00 Berlin.
      { name: 'next-opening', kind: 'sleep', startedAt: '2025-03-07T08:30:00.000Z', due: '2025-03-10T08:00:00.000Z', outcome: 'slept' },
    ]);
    const thread = (await sandboxClient(run.sandbox!).messages.list(38, { per_page: 50 }).firstPage()).data;
    expect(thread.find((m) => m.body === 'woke up')?.created_at).toMatch(/^2025-03-10T0[89]:00:00/);
  });

  it('a name used twice dead-letters the run with a HandlerConfigError naming it', async () => {
    const twice = defineHandler({
      id: 'twice',
      on: ['message.received'],
      async handle(_event, ctx) {
        await ctx.sleep('nap', '1m');
        await ctx.sleep('nap', '1m');
      },
    });
    const run = await testHandler(twice, inbound);
    expect(run.outcome).toBe('dead');
    expect(String(run.error)).toContain('HandlerConfigError: ctx.sleep("nap") in handler "twice": the name is reached twice in one run');
  });

  it('a bad duration is a HandlerConfigError saying what is expected', async () => {
    const bad = defineHandler({ id: 'bad', on: ['message.received'], handle: (_e, ctx) => ctx.sleep('nap', 'soon') });
    const run = await testHandler(bad, inbound);
    expect(String(run.error)).toContain(`ctx.sleep("nap") in handler "bad": the duration must be a duration such as '15m'`);
  });
});

describe('waitForEvent', () => {
  const waiter = (lookback?: boolean | string) =>
    defineHandler({
      id: 'waiter',
      on: ['message.received'],
      async handle(_event, ctx) {
        await ctx.sleep('busy', '10m');
        const got = await ctx.waitForEvent('reply', {
          event: 'message.sent',
          match: 'conversation',
          timeout: '1h',
          ...(lookback === undefined ? {} : { lookback }),
        });
        await ctx.step('got', async () => got?.data.id ?? null);
      },
    });

  it("returns the first matching event received after the run's own (lookback default): one that came during the sleep counts", async () => {
    const run = await testHandler(waiter(), inbound, {
      now: MONDAY_1630,
      events: [
        { event: reply(99), after: '1m' },
        { event: reply(), after: '5m' },
        { event: createEvent('message.sent', { data: { id: 77 } }), after: '20m' },
      ],
    });
    expect(run.waits[1]).toMatchObject({
      name: 'reply',
      kind: 'wait',
      startedAt: '2025-03-03T15:40:00.000Z',
      due: '2025-03-03T16:40:00.000Z',
      outcome: 'matched',
    });
    expect(run.waits[1]?.event).toMatchObject({ name: 'message.sent', data: { id: 40, conversation_id: 38 } });
    expect(run.steps).toEqual([{ name: 'got', result: 40, reused: false }]);
  });

  it('lookback false: only events after the wait began; a duration: at most that long before it', async () => {
    const events = [
      { event: reply(), after: '5m' },
      { event: createEvent('message.sent', { data: { id: 77 } }), after: '20m' },
    ];
    const strict = await testHandler(waiter(false), inbound, { now: MONDAY_1630, events });
    expect(strict.steps[0]?.result).toBe(77);
    expect(strict.waits[1]?.outcome).toBe('matched');
    const recent = await testHandler(waiter('2m'), inbound, { now: MONDAY_1630, events });
    expect(recent.steps[0]?.result).toBe(77);
    const wide = await testHandler(waiter('6m'), inbound, { now: MONDAY_1630, events });
    expect(wide.steps[0]?.result).toBe(40);
  });

  it('null once the timeout passed, the clock moved by it; other conversations and later events do not count', async () => {
    const run = await testHandler(waiter(), inbound, { now: MONDAY_1630, events: [reply(99), { event: reply(), after: '2h' }] });
    expect(run.waits[1]).toEqual({
      name: 'reply',
      kind: 'wait',
      startedAt: '2025-03-03T15:40:00.000Z',
      due: '2025-03-03T16:40:00.000Z',
      outcome: 'timed_out',
    });
    expect(run.steps[0]?.result).toBeNull();
  });

  it("events without a time are received in order, just after the run's own event", async () => {
    const run = await testHandler(waiter(), inbound, { now: MONDAY_1630, events: [reply()] });
    expect(run.waits[1]?.outcome).toBe('matched');
    const strict = await testHandler(waiter(false), inbound, { now: MONDAY_1630, events: [reply()] });
    expect(strict.waits[1]?.outcome).toBe('timed_out');
  });

  it("a function match compares its key of the run's event with each candidate's, as in the worker", async () => {
    const byFunction = defineHandler({
      id: 'by-function',
      on: ['message.received'],
      handle: async (_e, ctx) =>
        void (await ctx.waitForEvent('reply', {
          event: 'message.sent',
          timeout: '1h',
          match: (e) => (e.data as { conversation_id?: number }).conversation_id,
        })),
    });
    const other = await testHandler(byFunction, inbound, { now: MONDAY_1630, events: [reply(99)] });
    expect(other.waits[0]?.outcome).toBe('timed_out');
    const same = await testHandler(byFunction, inbound, { now: MONDAY_1630, events: [reply(99), reply(38)] });
    expect(same.waits[0]?.outcome).toBe('matched');
  });

  it('as in the worker: a run whose event has no such id, or no key from the function, is a HandlerConfigError (dead at once)', async () => {
    const noKey = defineHandler({
      id: 'no-key',
      on: ['message.received'],
      handle: async (_e, ctx) => void (await ctx.waitForEvent('reply', { event: 'message.sent', match: () => null, timeout: '1h' })),
    });
    const run = await testHandler(noKey, inbound);
    expect(run.outcome).toBe('dead');
    expect(run.error).toBeInstanceOf(HandlerConfigError);
    expect(String(run.error)).toContain('has no key (the match function gave none) to match on');
    const byContact = defineHandler({
      id: 'by-contact',
      on: ['message.received'],
      handle: async (_e, ctx) => void (await ctx.waitForEvent('reply', { event: 'conversation.closed', match: 'contact', timeout: '1h' })),
    });
    expect(String((await testHandler(byContact, inbound)).error)).toContain(
      "the run's event (message.received) has no contact id to match on",
    );
  });

  it("a schedule's run cannot sleep, wait or keep state, as in the worker: a HandlerConfigError saying so (dead at once)", async () => {
    for (const [what, use] of [
      ['ctx.sleep', (ctx) => ctx.sleep('nap', '30m')],
      ['ctx.waitForEvent', (ctx) => ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '1h' })],
      ['ctx.state', (ctx) => ctx.state.get()],
    ] as const satisfies readonly (readonly [string, (ctx: ScheduleContext) => Promise<unknown>])[]) {
      const sched = defineSchedule({ id: 'sched', every: '1h', handle: async (ctx) => void (await use(ctx)) });
      const run = await testSchedule(sched, { at: '2025-03-03T08:00:00Z' });
      expect(run.outcome).toBe('dead');
      expect(run.error).toBeInstanceOf(HandlerConfigError);
      expect(String(run.error)).toContain(`${what} in schedule "sched": a schedule's run cannot sleep, wait for an event or keep state`);
      expect(run.waits).toEqual([]);
    }
  });
});

describe('cancelOn', () => {
  let after = false;
  const sla = defineHandler({
    id: 'sla',
    on: ['message.received'],
    cancelOn: [
      { event: 'message.sent', match: 'conversation' },
      { event: 'conversation.closed', match: 'conversation' },
    ],
    async handle(_event, ctx) {
      await ctx.sleep('sla', '1h', { businessHours: HOURS });
      after = true;
    },
  });

  it('a matching event received before the sleep ends cancels the run: outcome cancelled, nothing after the sleep runs', async () => {
    after = false;
    const run = await testHandler(sla, inbound, {
      now: MONDAY_1630,
      events: [
        { event: reply(99), after: '1m' },
        { event: closed(), after: '20m' },
      ],
    });
    expect(run.outcome).toBe('cancelled');
    expect(after).toBe(false);
    expect(run.waits).toMatchObject([
      {
        name: 'sla',
        kind: 'sleep',
        due: '2025-03-04T08:30:00.000Z',
        outcome: 'cancelled',
        event: { name: 'conversation.closed', data: { id: 38 } },
      },
    ]);
    expect(run.error).toBeUndefined();
  });

  it('one received after the sleep ended, or of another conversation, does not', async () => {
    after = false;
    const run = await testHandler(sla, inbound, { now: MONDAY_1630, events: [reply(99), { event: reply(), at: '2025-03-04T09:00:00Z' }] });
    expect(run.outcome).toBe('completed');
    expect(after).toBe(true);
    expect(run.waits[0]?.outcome).toBe('slept');
  });

  it('a cancelling event that comes before the awaited one cancels a wait', async () => {
    const waiting = defineHandler({
      id: 'waiting',
      on: ['message.received'],
      cancelOn: [{ event: 'conversation.closed', match: 'conversation' }],
      async handle(_event, ctx) {
        await ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '1h' });
      },
    });
    const cancelled = await testHandler(waiting, inbound, {
      events: [
        { event: closed(), after: '1m' },
        { event: reply(), after: '2m' },
      ],
    });
    expect(cancelled.outcome).toBe('cancelled');
    expect(cancelled.waits[0]?.outcome).toBe('cancelled');
    const matched = await testHandler(waiting, inbound, {
      events: [
        { event: reply(), after: '1m' },
        { event: closed(), after: '2m' },
      ],
    });
    expect(matched.outcome).toBe('completed');
    expect(matched.waits[0]?.outcome).toBe('matched');
  });

  it('as in the worker, only a run that parks can be cancelled: a sleep already over is not; a wait that parks is, by a close received before it began', async () => {
    const busyFirst = defineHandler({
      id: 'busy-first',
      on: ['message.received'],
      cancelOn: [{ event: 'conversation.closed', match: 'conversation' }],
      async handle(_event, ctx) {
        await ctx.sleepUntil('over', '2000-01-01T00:00:00Z');
        await ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '1h' });
      },
    });
    const run = await testHandler(busyFirst, inbound, { events: [closed(), { event: reply(), after: '1m' }] });
    expect(run.outcome).toBe('cancelled');
    expect(run.waits.map((w) => w.outcome)).toEqual(['slept', 'cancelled']);
  });
});

describe('ctx.state', () => {
  const counter = defineHandler({
    id: 'counter',
    on: ['message.received'],
    state: { key: 'conversation', ttl: '1d' },
    async handle(_event, ctx) {
      const before = await ctx.state.get();
      await ctx.state.update((n) => ({ count: ((n as { count?: number } | null)?.count ?? 0) + 1 }));
      await ctx.step('before', async () => before);
      await ctx.sleep('two-days', '2d');
      await ctx.step('expired', async () => ctx.state.get());
      await ctx.state.set({ count: 100 });
    },
  });

  it('is seeded by `state`, kept in memory, expires after its ttl on the virtual clock, and is reported after the run', async () => {
    const run = await testHandler(counter, inbound, { state: { count: 2 } });
    expect(run.outcome, run.reason).toBe('completed');
    expect(run.steps.map((s) => [s.name, s.result])).toEqual([
      ['before', { count: 2 }],
      ['expired', null],
    ]);
    expect(run.state).toEqual({ count: 100 });
    expect((await testHandler(counter, inbound)).steps[0]?.result).toBeNull();
  });

  it('a handler with neither orderBy nor state: using ctx.state is a HandlerConfigError; giving `state` is a TypeError', async () => {
    const stateless = defineHandler({ id: 'stateless', on: ['message.received'], handle: async (_e, ctx) => void (await ctx.state.get()) });
    const run = await testHandler(stateless, inbound);
    expect(run.outcome).toBe('dead');
    expect(run.error).toBeInstanceOf(HandlerConfigError);
    expect(String(run.error)).toContain('handler "stateless" uses ctx.state but has neither "orderBy" nor "state: { key }"');
    await expect(testHandler(stateless, inbound, { state: 1 })).rejects.toThrow(
      /testHandler: state is given, but handler "stateless" has no ctx.state/,
    );
    expect(run.state).toBeNull();
  });
});

describe('events option', () => {
  it('each entry is an event, { event, at } or { event, after }; anything else is a TypeError', async () => {
    const h = defineHandler({ id: 'h', on: ['message.received'], handle() {} });
    await expect(testHandler(h, inbound, { events: ['message.sent'] as never })).rejects.toThrow(
      'testHandler: events[0] must be an event (createEvent) or { event, at?, after? }',
    );
    await expect(testHandler(h, inbound, { events: [{ event: reply(), at: 'soon' }] })).rejects.toThrow(
      'testHandler: events[0].at must be a Date, an ISO time or ms',
    );
    await expect(testHandler(h, inbound, { events: [{ event: reply(), at: 0, after: '1m' } as never] })).rejects.toThrow(
      'gives both at and after',
    );
    expect((await testHandler(h, inbound, { events: [reply()] })).waits).toEqual([]);
  });
});

describe('a keyed match: { on, where } (the key first, then the function)', () => {
  const sent = (conversation: number, body: string) => createEvent('message.sent', { data: { conversation_id: conversation, body } });
  const waiter = defineHandler({
    id: 'keyed-waiter',
    on: ['message.received'],
    cancelOn: [{ event: 'conversation.closed', match: { on: 'conversation', where: (e) => e.data.subject === 'spam' } }],
    async handle(_event, ctx) {
      const got = await ctx.waitForEvent('done', {
        event: 'message.sent',
        match: { on: 'conversation', where: (e) => e.data.body === 'done' },
        timeout: '1h',
      });
      ctx.log.info({ got: got?.data.body ?? null }, 'waited');
    },
  });

  it("takes the first event of its own conversation that where accepts, never another conversation's", async () => {
    const run = await testHandler(waiter, inbound, { events: [sent(88, 'done'), sent(38, 'not yet'), sent(38, 'done')] });
    expect(run.outcome).toBe('completed');
    expect(run.waits.map((w) => [w.name, w.outcome])).toEqual([['done', 'matched']]);
    expect(run.waits[0]?.event?.data).toMatchObject({ conversation_id: 38, body: 'done' });
  });

  it("in cancelOn: only its conversation's events where accepts cancel the run", async () => {
    const spam = (conversation: number) => createEvent('conversation.closed', { data: { id: conversation, subject: 'spam' } });
    expect((await testHandler(waiter, inbound, { events: [spam(88), closed(38)] })).outcome).toBe('completed');
    expect((await testHandler(waiter, inbound, { events: [spam(38)] })).outcome).toBe('cancelled');
  });

  it('a bad where is refused where it is written', async () => {
    const bad = defineHandler({
      id: 'bad-where',
      on: ['message.received'],
      async handle(_e, ctx) {
        await ctx.waitForEvent('done', { event: 'message.sent', match: { on: 'conversation', wher: () => true } as never, timeout: '1h' });
      },
    });
    const run = await testHandler(bad, inbound);
    expect(run.outcome).toBe('dead');
    expect(run.reason).toBe(
      `HandlerConfigError: ctx.waitForEvent("done") in handler "bad-where": "match" has an unknown option "wher"; did you mean "where"? (expected on and where)`,
    );
  });
});
