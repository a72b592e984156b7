import { describe, expect, test } from 'vitest';
import { defineLoose, definitionError } from '../../support/definitions.js';
import { KEY_SOURCES } from '../../../src/handler/define.js';
import { describeRunPolicy, keyOf } from '../../../src/handler/run-policy.js';
import { EVENT_NAMES } from '../../../src/events/catalogue.js';
import { createEvent } from '../../../src/testing/index.js';

const base = { id: 'h', on: ['conversation.closed'], handle() {} };

describe('flow options of a handler definition', () => {
  test('defaults: normal priority, no order, no maxAge, no debounce', () => {
    expect(defineLoose(base).flow).toEqual({
      priority: 'normal',
      orderBy: null,
      maxAgeMs: null,
      skipStale: false,
      debounce: null,
      onDead: 'release',
    });
    expect(describeRunPolicy(defineLoose(base).flow)).toBe('priority normal');
  });

  test('every option, durations as text or milliseconds', () => {
    const h = defineLoose({ ...base, priority: 'high', orderBy: 'contact', skipStale: true, onDead: 'block', maxAge: '10m' });
    expect(h.flow).toMatchObject({ priority: 'high', orderBy: 'contact', skipStale: true, onDead: 'block', maxAgeMs: 600_000 });
    expect(describeRunPolicy(h.flow)).toBe('priority high · orderBy contact (dead run blocks its key) · skipStale · maxAge 10m');
    const d = defineLoose({ ...base, priority: 'low', debounce: { key: 'conversation', wait: 2_000 } });
    expect(d.flow.debounce).toMatchObject({ key: 'conversation', waitMs: 2_000, maxWaitMs: 20_000 });
    expect(describeRunPolicy(d.flow)).toBe('priority low · debounce conversation wait 2s maxWait 20s');
  });

  test.each([
    [{ priority: 'urgent' }, `"priority" must be 'high', 'normal' or 'low', got "urgent"`],
    [{ orderBy: 'thread' }, `"orderBy" must be 'conversation', 'contact' or a function (event) => key, got "thread"`],
    [{ maxAge: 'soon' }, `"maxAge" must be a positive duration such as '10m'`],
    [{ maxAge: 0 }, `"maxAge" must be a positive duration`],
    [{ maxAge: '0s' }, `"maxAge" must be a positive duration`],
    [{ debounce: { key: 'contact', wait: '0ms' } }, `"debounce.wait" must be a positive duration`],
    [{ skipStale: true }, '"skipStale" needs "orderBy"'],
    [{ skipStale: 'yes', orderBy: 'contact' }, '"skipStale" must be true or false'],
    [{ onDead: 'block' }, '"onDead" needs "orderBy"'],
    [{ onDead: 'drop', orderBy: 'contact' }, `"onDead" must be 'release' or 'block'`],
    [{ debounce: 5 }, '"debounce" must be an object { key, wait, maxWait? }'],
    [{ debounce: { key: 'contact' } }, `"debounce.wait" must be a positive duration such as '5s'`],
    [{ debounce: { key: 'contact', wait: '5s', maxWait: '1s' } }, '"debounce.maxWait" must be a duration of at least debounce.wait (5s)'],
    [{ debounce: { key: 'contact', wait: '5s', leading: true } }, '"debounce" has an unknown option "leading"'],
    [{ debounce: { key: 'contact', wait: '5s' }, orderBy: 'contact' }, '"debounce" and "orderBy" cannot be combined yet'],
    [{ prority: 'high' }, 'unknown option "prority"; did you mean "priority"?'],
    [{ orderby: 'contact' }, 'unknown option "orderby"; did you mean "orderBy"?'],
  ])('a bad flow option %j is a definition error naming the handler', (extra, message) => {
    expect(definitionError({ ...base, ...extra })).toContain(`handler "h": ${message}`);
  });

  test('a built-in key the event does not carry is refused at definition, naming the events', () => {
    expect(definitionError({ ...base, on: ['message.received', 'conversation.closed'], orderBy: 'contact' })).toContain(
      `"orderBy: 'contact'" cannot be used with message.received: that event carries no contact id; use a function (event) => key`,
    );
    expect(definitionError({ ...base, on: ['contact.created', 'lead.won'], debounce: { key: 'conversation', wait: '1s' } })).toContain(
      'cannot be used with contact.created, lead.won: those events carry no conversation id',
    );
  });

  test('helpers beside handle are still allowed', () => {
    expect(() =>
      defineLoose({
        ...base,
        format() {
          return '';
        },
      }),
    ).not.toThrow();
  });
});

describe('keys of events', () => {
  test('every event names where its conversation and contact ids come from, and the shipped fixtures have them', () => {
    for (const name of EVENT_NAMES) {
      const event = createEvent(name);
      const sources = KEY_SOURCES[name];
      if (sources.conversation) expect(keyOf('conversation', event)).toMatch(/^conversation:\d+$/);
      else expect(keyOf('conversation', event)).toBeNull();
      if (sources.contact) expect(keyOf('contact', event)).toMatch(/^contact:\d+$/);
      else expect(keyOf('contact', event)).toBeNull();
    }
  });

  test('conversation.closed: the conversation is data.id and the contact data.contact_id', () => {
    const event = createEvent('conversation.closed', { data: { id: 41, contact_id: 7 } });
    expect(keyOf('conversation', event)).toBe('conversation:41');
    expect(keyOf('contact', event)).toBe('contact:7');
  });

  test('a function key: its value as text; undefined, null or empty means no key', () => {
    const event = createEvent('lead.won', { data: { id: 3 } });
    expect(keyOf((e) => (e.name === 'lead.won' ? `lead-${(e.data as { id: number }).id}` : undefined), event)).toBe('lead-3');
    expect(keyOf(() => 12, event)).toBe('12');
    expect(keyOf(() => undefined, event)).toBeNull();
    expect(keyOf(() => null, event)).toBeNull();
    expect(keyOf(() => '', event)).toBeNull();
  });
});
