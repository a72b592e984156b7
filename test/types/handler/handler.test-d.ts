import { describe, expectTypeOf, test } from 'vitest';
import type { Contact, ContactLifecycle } from '../../../src/spec/schemas/contact.js';
import type { Conversation } from '../../../src/spec/schemas/conversation.js';
import type { Lead } from '../../../src/spec/schemas/lead.js';
import type { Message } from '../../../src/spec/schemas/message.js';
import type { EventData, EventName, KnownFields, WorkspaceEvent } from '../../../src/events/catalogue.js';
import { z } from 'zod';
import type { ApiClient } from '../../../src/api/client.js';
import {
  defineHandler,
  type Handler,
  type HandlerApi,
  type HandlerContext,
  type KeyOption,
  type Priority,
} from '../../../src/handler/define.js';
import type { BusinessHours } from '../../../src/recipes/business-hours.js';
import { businessHoursSetting } from '../../../src/recipes/setting-schemas.js';

describe('event types derived from the catalogue', () => {
  test('EventData maps each name to its resource (known fields only)', () => {
    expectTypeOf<EventData<'message.received'>>().toEqualTypeOf<KnownFields<Message>>();
    expectTypeOf<EventData<'conversation.closed'>>().toEqualTypeOf<KnownFields<Conversation>>();
    expectTypeOf<EventData<'contact.created'>>().toEqualTypeOf<KnownFields<Contact>>();
    expectTypeOf<EventData<'contact.lifecycle_changed'>>().toEqualTypeOf<KnownFields<ContactLifecycle>>();
    expectTypeOf<EventData<'lead.won'>>().toEqualTypeOf<KnownFields<Lead>>();
  });

  test('event data is still accepted where the API resource types are expected', () => {
    expectTypeOf<EventData<'conversation.closed'>>().toExtend<Conversation>();
    expectTypeOf<EventData<'contact.lifecycle_changed'>>().toExtend<ContactLifecycle>();
    expectTypeOf<EventData<'message.sent'>>().toExtend<Message>();
  });

  test('the fields of a resource keep their exact types', () => {
    expectTypeOf<EventData<'conversation.opened'>['assignee']>().toEqualTypeOf<{ type: 'user' | 'ai'; id: number } | null>();
    expectTypeOf<EventData<'contact.lifecycle_changed'>['previous']>().toEqualTypeOf<{
      id: number;
      name: string;
      role: string | null;
      outcome: string | null;
    } | null>();
    expectTypeOf<EventData<'lead.created'>['value']>().toEqualTypeOf<string | null | undefined>();
  });

  test('WorkspaceEvent distributes over a union of names', () => {
    expectTypeOf<WorkspaceEvent<'lead.won' | 'message.sent'>>().toEqualTypeOf<
      WorkspaceEvent<'lead.won'> | WorkspaceEvent<'message.sent'>
    >();
    expectTypeOf<WorkspaceEvent['name']>().toEqualTypeOf<EventName>();
  });
});

describe('defineHandler narrows the event by `on`', () => {
  test('one name: data is that resource', () => {
    const h = defineHandler({
      id: 'follow-up-task',
      on: ['conversation.closed'],
      async handle(event, ctx) {
        expectTypeOf(event.name).toEqualTypeOf<'conversation.closed'>();
        expectTypeOf(event.data).toEqualTypeOf<KnownFields<Conversation>>();
        expectTypeOf(event.data.status).toEqualTypeOf<'open' | 'pending' | 'snoozed' | 'closed'>();
        expectTypeOf(event.data.closed_at).toEqualTypeOf<string | null>();
        expectTypeOf(event.id).toEqualTypeOf<string | null>();
        expectTypeOf(ctx).toEqualTypeOf<HandlerContext>();
        expectTypeOf(ctx.delivery.attempt).toEqualTypeOf<number>();
        expectTypeOf(ctx.step('read', async () => 42)).resolves.toEqualTypeOf<number>();

        // @ts-expect-error a field the Conversation does not have
        void event.data.nonexistent;
        // @ts-expect-error 'bogus' is not a conversation status
        if (event.data.status === 'bogus') return;
      },
    });
    expectTypeOf(h).toEqualTypeOf<Handler<'conversation.closed'>>();
    expectTypeOf(h.on).toEqualTypeOf<readonly 'conversation.closed'[]>();
    // A specific handler is storable where the loader keeps every handler.
    expectTypeOf(h).toExtend<Handler>();
  });

  test('two names: a union, narrowed by event.name', () => {
    defineHandler({
      id: 'mixed',
      on: ['message.received', 'lead.won'],
      handle(event) {
        expectTypeOf(event.name).toEqualTypeOf<'message.received' | 'lead.won'>();
        expectTypeOf(event.data).toEqualTypeOf<KnownFields<Message> | KnownFields<Lead>>();
        if (event.name === 'message.received') {
          expectTypeOf(event.data).toEqualTypeOf<KnownFields<Message>>();
          expectTypeOf(event.data.direction).toEqualTypeOf<'inbound' | 'outbound' | null>();
        } else {
          expectTypeOf(event.data).toEqualTypeOf<KnownFields<Lead>>();
        }
        // @ts-expect-error `body` exists on a Message but not on a Lead
        void event.data.body;
      },
    });
  });

  test('a misspelled event name does not compile', () => {
    defineHandler({
      id: 'typo',
      // @ts-expect-error 'conversation.closd' is not an event name
      on: ['conversation.closd'],
      handle() {},
    });
  });

  test('an unknown ability does not compile', () => {
    defineHandler({
      id: 'abilities',
      on: ['contact.created'],
      // @ts-expect-error 'contacts:merge' is not an ability
      abilities: ['contacts:merge'],
      handle() {},
    });
  });

  test('handle may not return a value other than void', () => {
    defineHandler({
      id: 'returns',
      on: ['lead.lost'],
      handle: async (event) => {
        expectTypeOf(event.data.outcome).toEqualTypeOf<'open' | 'won' | 'lost' | null | undefined>();
      },
    });
  });
});

describe('handler options', () => {
  test('ctx.settings is typed from the settings schema (its output: defaults, coercion, transforms)', () => {
    const h = defineHandler({
      id: 'settings',
      on: ['conversation.closed'],
      settings: z.object({
        FOLLOW_UP_DAYS: z.coerce.number().default(2),
        WON_STAGE: z.string().optional(),
        MERGE: z.stringbool().default(false),
        BUSINESS_HOURS: businessHoursSetting(),
      }),
      retry: { attempts: 3, backoff: { type: 'fixed', delay: '2s' } },
      timeout: '30s',
      handle(_event, ctx) {
        expectTypeOf(ctx.settings.FOLLOW_UP_DAYS).toEqualTypeOf<number>();
        expectTypeOf(ctx.settings.WON_STAGE).toEqualTypeOf<string | undefined>();
        expectTypeOf(ctx.settings.MERGE).toEqualTypeOf<boolean>();
        expectTypeOf(ctx.settings.BUSINESS_HOURS).toEqualTypeOf<BusinessHours>();
        // @ts-expect-error a variable the schema does not name
        void ctx.settings.OTHER;
        // @ts-expect-error settings are read-only
        ctx.settings.FOLLOW_UP_DAYS = 3;
      },
    });
    expectTypeOf(h).toExtend<Handler>();
    expectTypeOf(h.retry.attempts).toEqualTypeOf<number>();
    expectTypeOf(h.timeoutMs).toEqualTypeOf<number | null>();
  });

  test('without a schema ctx.settings has no keys, and ctx.env is gone', () => {
    defineHandler({
      id: 'plain',
      on: ['lead.won'],
      handle(_event, ctx) {
        // @ts-expect-error no settings declared
        void ctx.settings.FOLLOW_UP_DAYS;
        // @ts-expect-error handlers read their settings, not the environment
        void ctx.env;
      },
    });
  });

  test('a bad retry or timeout does not compile', () => {
    defineHandler({
      id: 'bad-retry',
      on: ['lead.won'],
      // @ts-expect-error 'linear' is not a back-off type
      retry: { attempts: 3, backoff: { type: 'linear', delay: 1000 } },
      handle() {},
    });
    defineHandler({
      id: 'bad-timeout',
      on: ['lead.won'],
      // @ts-expect-error a timeout is a duration (text or milliseconds)
      timeout: true,
      handle() {},
    });
  });

  test('ctx.step returns the JSON round-tripped type', () => {
    defineHandler({
      id: 'steps',
      on: ['lead.won'],
      async handle(_event, ctx) {
        const r = await ctx.step('when', async () => ({ at: new Date(), n: 1, gone: undefined, fn: () => 1 }));
        expectTypeOf(r).toEqualTypeOf<{ at: string; n: number }>();
        expectTypeOf(await ctx.step('date', async () => new Date())).toEqualTypeOf<string>();
        expectTypeOf(await ctx.step('nothing', async () => {})).toEqualTypeOf<undefined>();
      },
    });
  });

  test('ctx.api is the client without the rate limiter', () => {
    expectTypeOf<HandlerContext['api']>().toEqualTypeOf<HandlerApi>();
    expectTypeOf<HandlerApi>().not.toHaveProperty('rateLimiter');
    expectTypeOf<ApiClient>().toHaveProperty('rateLimiter');
    expectTypeOf<HandlerApi['contacts']>().toEqualTypeOf<ApiClient['contacts']>();
  });
  test('flow options: priority names, keys typed by the events handled', () => {
    const h = defineHandler({
      id: 'flow',
      on: ['message.received', 'conversation.closed'],
      priority: 'high',
      maxAge: '10m',
      // The event is the union of the handled ones: narrowing by name types data.
      orderBy: (event) => (event.name === 'message.received' ? event.data.conversation_id : event.data.id),
      skipStale: true,
      onDead: 'block',
      handle(_event, ctx) {
        expectTypeOf(ctx.debounced).toEqualTypeOf<{ readonly count: number; readonly firstAt: string } | null>();
      },
    });
    expectTypeOf(h.flow.priority).toEqualTypeOf<Priority>();
    defineHandler({ id: 'deb', on: ['contact.lifecycle_changed'], debounce: { key: 'contact', wait: '5s', maxWait: 60_000 }, handle() {} });
    defineHandler({
      id: 'bad-priority',
      on: ['lead.won'],
      // @ts-expect-error priority is high, normal or low
      priority: 'urgent',
      handle() {},
    });
    // A key function sees only the handled events' data: a lead carries no conversation id.
    type LeadKey = Extract<KeyOption<'lead.won'>, (event: never) => unknown>;
    expectTypeOf<Parameters<LeadKey>[0]['data']>().toHaveProperty('contact_id');
    expectTypeOf<Parameters<LeadKey>[0]['data']>().not.toHaveProperty('conversation_id');
    defineHandler({
      id: 'bad-builtin',
      on: ['lead.won'],
      // @ts-expect-error built-in keys are conversation or contact
      orderBy: 'lead',
      handle() {},
    });
  });
});

describe('workflows over time', () => {
  test('ctx.sleep, sleepUntil, waitForEvent and state are typed; cancelOn and state are checked', () => {
    const hours = null as unknown as BusinessHours;
    defineHandler({
      id: 'wf',
      on: ['message.received'],
      cancelOn: [
        { event: 'conversation.closed', match: 'conversation' },
        { event: 'lead.won', match: (e) => e.id },
      ],
      state: { key: 'conversation', ttl: '7d' },
      async handle(_event, ctx) {
        expectTypeOf(ctx.sleep('nap', '1h', { businessHours: hours })).toEqualTypeOf<Promise<void>>();
        expectTypeOf(ctx.sleepUntil('until', new Date())).toEqualTypeOf<Promise<void>>();
        const reply = await ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '1h', lookback: '5m' });
        expectTypeOf(reply).toEqualTypeOf<WorkspaceEvent<'message.sent'> | null>();
        await ctx.state.set({ escalated: true });
        // @ts-expect-error an unknown event to wait for
        await ctx.waitForEvent('x', { event: 'message.snt', match: 'conversation', timeout: 1 });
        // @ts-expect-error a wait needs a timeout
        await ctx.waitForEvent('y', { event: 'message.sent', match: 'conversation' });
        // @ts-expect-error no such key
        await ctx.waitForEvent('z', { event: 'message.sent', match: 'thread', timeout: 1 });
      },
    });
    // @ts-expect-error cancelOn event names are checked
    defineHandler({ id: 'x', on: ['lead.won'], cancelOn: [{ event: 'lead.wonn', match: 'contact' }], handle() {} });
    // @ts-expect-error a cancelOn entry needs a match
    defineHandler({ id: 'x', on: ['lead.won'], cancelOn: [{ event: 'lead.lost' }], handle() {} });
    // @ts-expect-error ttl is a duration
    defineHandler({ id: 'x', on: ['lead.won'], state: { key: 'contact', ttl: true }, handle() {} });
    // With orderBy, state may give only its ttl (the key is orderBy's; without either, defineHandler refuses it at load).
    defineHandler({ id: 'x', on: ['lead.won'], orderBy: 'contact', state: { ttl: '1d' }, handle() {} });
  });
});
