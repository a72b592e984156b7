import { describe, expectTypeOf, test } from 'vitest';
import type { WorkspaceEvent } from '../../../src/events/catalogue.js';
import { z } from 'zod';
import { defineSchedule } from '../../../src/index.js';
import {
  createEvent,
  testHandler,
  testSchedule,
  type TestCall,
  type TestHandlerResult,
  type TestOutcome,
  type TestScheduleOptions,
  type TestScheduleOutcome,
  type TestScheduleResult,
  type TestWait,
  type TestEventInput,
  type TestHandlerOptions,
} from '../../../src/testing/index.js';
import { defineHandler } from '../../../src/handler/define.js';
import awayReply from '../../../handlers/away-reply.js';
import leadWon from '../../../handlers/lead-won.js';
import mergeDuplicates from '../../../handlers/merge-duplicates.js';

describe('switchyard/testing types', () => {
  test("createEvent gives the typed event of its name, and checks the overrides' fields and types", () => {
    expectTypeOf(createEvent('lead.won')).toEqualTypeOf<WorkspaceEvent<'lead.won'>>();
    expectTypeOf(createEvent('lead.won', { data: { value: '5.00' } }).data.value).toEqualTypeOf<string | null | undefined>();
    createEvent('conversation.closed', { data: { assignee: { id: 3 } } });
    createEvent('conversation.closed', { data: { assignee: null }, id: null, createdAt: '2026-01-01T00:00:00Z' });
    // @ts-expect-error value is a decimal string, not a number
    createEvent('lead.won', { data: { value: 5 } });
    // @ts-expect-error no such field
    createEvent('lead.won', { data: { contactId: 5 } });
    // @ts-expect-error nested fields are checked too
    createEvent('conversation.closed', { data: { assignee: { type: 'robot' } } });
    // @ts-expect-error nested names too
    createEvent('conversation.closed', { data: { channel: { kind: 'whatsapp' } } });
    // @ts-expect-error unknown event
    createEvent('lead.wonn');
  });

  test('testHandler takes only events its handler subscribes to, and settings it has', () => {
    expectTypeOf(testHandler(leadWon, 'lead.won')).resolves.toEqualTypeOf<TestHandlerResult<'lead.won'>>();
    expectTypeOf(testHandler(leadWon, createEvent('lead.won')))
      .resolves.toHaveProperty('event')
      .toEqualTypeOf<WorkspaceEvent<'lead.won'>>();
    expectTypeOf<TestHandlerResult['outcome']>().toEqualTypeOf<TestOutcome>();
    expectTypeOf<TestOutcome>().toEqualTypeOf<'completed' | 'cancelled' | 'retry' | 'delay' | 'dead' | 'pause'>();
    expectTypeOf<TestCall['idempotencyKey']>().toEqualTypeOf<string | undefined>();
    // @ts-expect-error lead-won does not subscribe to message.received
    void testHandler(leadWon, 'message.received');
    // @ts-expect-error nor to a lead.lost event
    void testHandler(leadWon, createEvent('lead.lost'));
    void testHandler(leadWon, 'lead.won', { settings: { WON_STAGE: 'Customer' } });
    void testHandler(mergeDuplicates, 'contact.created', { settings: { MERGE_DUPLICATES: true } });
    void testHandler(mergeDuplicates, 'contact.created', { settings: { MERGE_DUPLICATES: 'yes' } });
    // A setting parsed to an object is given as its text.
    void testHandler(awayReply, 'message.received', { settings: { BUSINESS_HOURS: 'Mon-Fri 09:00-17:00 Europe/Berlin' } });
    // @ts-expect-error no such setting
    void testHandler(leadWon, 'lead.won', { settings: { WON_STAGES: 'x' } });
    // @ts-expect-error a boolean setting takes a boolean or its text
    void testHandler(mergeDuplicates, 'contact.created', { settings: { MERGE_DUPLICATES: 1 } });
  });

  test("testSchedule takes its schedule's settings, a tick, and returns the result with the tick and no event", () => {
    const digest = defineSchedule({
      id: 'digest',
      every: '1h',
      settings: z.object({
        DIGEST_DAYS: z.coerce.number().int().default(1),
        DIGEST_LOUD: z.stringbool().default(false),
        DIGEST_LABEL: z.string().default('x'),
      }),
      handle: () => undefined,
    });
    expectTypeOf(testSchedule(digest)).resolves.toEqualTypeOf<TestScheduleResult>();
    expectTypeOf<TestScheduleResult['outcome']>().toEqualTypeOf<TestScheduleOutcome>();
    expectTypeOf<TestScheduleOutcome>().toEqualTypeOf<'completed' | 'retry' | 'delay' | 'dead'>();
    expectTypeOf<TestScheduleResult['tick']>().toEqualTypeOf<string>();
    expectTypeOf<TestScheduleResult['delivery']['source']>().toEqualTypeOf<'schedule'>();
    expectTypeOf<TestScheduleResult['calls']>().toEqualTypeOf<readonly TestCall[]>();
    expectTypeOf<TestScheduleResult>().not.toHaveProperty('event');
    expectTypeOf<TestScheduleOptions['at']>().toEqualTypeOf<Date | string | number | undefined>();
    void testSchedule(digest, { at: '2025-03-03T08:00:00Z', settings: { DIGEST_DAYS: 2, DIGEST_LOUD: 'true', DIGEST_LABEL: 'y' } });
    void testSchedule(digest, { at: new Date(), api: { url: 'http://127.0.0.1:4010/api/v1', token: 't' } });
    void testSchedule(digest, { at: 0, settings: { DIGEST_DAYS: '2' } });
    // @ts-expect-error no such setting
    void testSchedule(digest, { settings: { DIGEST_WEEKS: 1 } });
    // @ts-expect-error a boolean setting takes a boolean or its text
    void testSchedule(digest, { settings: { DIGEST_LOUD: 1 } });
    // @ts-expect-error schedules have no event source
    void testSchedule(digest, { source: 'webhook' });
    // @ts-expect-error a handler is not a schedule
    void testSchedule(leadWon);
  });

  test('workflows: events with their receipt, seeded state, the waits and the state after', () => {
    const sla = defineHandler({
      id: 'sla',
      on: ['message.received'],
      state: { key: 'conversation' },
      cancelOn: [{ event: 'conversation.closed', match: 'conversation' }],
      async handle(_event, ctx) {
        const reply = await ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '1h' });
        expectTypeOf(reply).toEqualTypeOf<WorkspaceEvent<'message.sent'> | null>();
        await ctx.sleep('later', '15m', {});
      },
    });
    void testHandler(sla, createEvent('message.received'), {
      events: [
        createEvent('message.sent'),
        { event: createEvent('conversation.closed'), after: '30m' },
        { event: createEvent('message.sent'), at: new Date() },
      ],
      state: { escalated: false },
    });
    // @ts-expect-error an event input is an event, or { event, at } or { event, after }, not both
    void testHandler(sla, 'message.received', { events: [{ event: createEvent('message.sent'), at: 0, after: '1m' }] });
    // @ts-expect-error a name is not an event
    void testHandler(sla, 'message.received', { events: ['message.sent'] });
    expectTypeOf<TestHandlerOptions['events']>().toEqualTypeOf<readonly TestEventInput[] | undefined>();
    expectTypeOf<TestHandlerResult['waits']>().toEqualTypeOf<readonly TestWait[]>();
    expectTypeOf<TestScheduleResult['waits']>().toEqualTypeOf<readonly TestWait[]>();
    expectTypeOf<TestHandlerResult['state']>().toEqualTypeOf<unknown>();
    expectTypeOf<TestWait['outcome']>().toEqualTypeOf<'slept' | 'matched' | 'timed_out' | 'cancelled'>();
    expectTypeOf<TestWait['kind']>().toEqualTypeOf<'sleep' | 'wait'>();
    expectTypeOf<TestWait['event']>().toEqualTypeOf<WorkspaceEvent | undefined>();
    expectTypeOf<TestScheduleOptions>().not.toHaveProperty('events');
  });

  test('a re-run from a step: fromStep names the step, previous what the steps before it returned', () => {
    void testHandler(awayReply, 'message.received', { fromStep: 'reply', previous: { lookup: { id: 38 }, count: 2 } });
    // @ts-expect-error fromStep is a step name
    void testHandler(awayReply, 'message.received', { fromStep: 2 });
    // @ts-expect-error previous maps step names to results, not a list
    void testHandler(awayReply, 'message.received', { fromStep: 'reply', previous: [1, 2] });
    expectTypeOf<TestHandlerOptions['fromStep']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<TestHandlerOptions['previous']>().toEqualTypeOf<Readonly<Record<string, unknown>> | undefined>();
    expectTypeOf<TestScheduleOptions>().not.toHaveProperty('fromStep');
  });
});
