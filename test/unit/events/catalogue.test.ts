import { describe, expect, test } from 'vitest';
import {
  DERIVED_EVENT_NAMES,
  EVENT_NAMES,
  EVENT_SCHEMAS,
  isDerivedEvent,
  WEBHOOK_EVENT_NAMES,
  isEventName,
  suggestEventName,
  validateEvent,
} from '../../../src/events/catalogue.js';
import { parseEnvelope } from '../../../src/events/envelope.js';
import { eventFields } from '../../../src/events/fields.js';

const conversation = {
  id: 812,
  contact_id: 4401,
  channel: { id: 3, name: 'Support WhatsApp', type: 'whatsapp' },
  status: 'closed',
  subject: null,
  assignee: { type: 'user', id: 17 },
  last_message_at: '2025-03-04T10:15:00+01:00',
  closed_at: '2025-03-04T10:20:00+01:00',
  created_at: '2025-03-04T09:58:00+01:00',
};

const envelopeOf = (body: unknown) => parseEnvelope(Buffer.from(JSON.stringify(body)));

describe('catalogue', () => {
  test('has the 11 webhook events of the spec and the 3 derived ones, each with a schema', () => {
    expect(EVENT_NAMES).toHaveLength(14);
    expect(new Set(EVENT_NAMES).size).toBe(14);
    expect(Object.keys(EVENT_SCHEMAS).sort()).toEqual([...EVENT_NAMES].sort());
  });

  test('the derived events are marked, validated like any event, and order.status_changed carries previous_status', () => {
    expect([...DERIVED_EVENT_NAMES]).toEqual(['order.created', 'order.status_changed', 'task.due']);
    expect([...WEBHOOK_EVENT_NAMES, ...DERIVED_EVENT_NAMES]).toEqual([...EVENT_NAMES]);
    for (const name of DERIVED_EVENT_NAMES) expect(isDerivedEvent(name)).toBe(true);
    for (const name of WEBHOOK_EVENT_NAMES) expect(isDerivedEvent(name)).toBe(false);
    const order = eventFields('order.created').map((f) => f.path);
    expect(order).toContain('status');
    expect(eventFields('order.status_changed').map((f) => f.path)).toContain('previous_status');
  });

  test('isEventName is exact', () => {
    expect(isEventName('lead.won')).toBe(true);
    expect(isEventName('Lead.Won')).toBe(false);
    expect(isEventName('lead')).toBe(false);
    expect(isEventName(42)).toBe(false);
  });

  test.each([
    ['conversation.closd', 'conversation.closed'],
    ['message.recieved', 'message.received'],
    ['Message.Received', 'message.received'],
    ['conversation_assigned', 'conversation.assigned'],
    ['contact.lifecycle_change', 'contact.lifecycle_changed'],
    ['lead.win', 'lead.won'],
    ['lead.won', 'lead.won'],
  ])('suggestEventName(%j) = %j', (input, expected) => {
    expect(suggestEventName(input)).toBe(expected);
  });

  test.each(['', 'foo', 'invoice.created', 'deal.won.twice.over'])('suggestEventName(%j) is null: nothing close', (input) => {
    expect(suggestEventName(input)).toBeNull();
  });
});

describe('validateEvent', () => {
  test('accepts a canonical envelope and keeps unknown extra fields', () => {
    const r = validateEvent(
      envelopeOf({
        id: 'evt_1',
        event: 'conversation.closed',
        created_at: '2025-03-04T10:20:01+01:00',
        data: { ...conversation, priority: 'high' },
      }),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.event).toMatchObject({ id: 'evt_1', name: 'conversation.closed', createdAt: '2025-03-04T10:20:01+01:00' });
    expect(r.event.data).toMatchObject({ id: 812, priority: 'high' });
  });

  test('narrows data by the event name', () => {
    const r = validateEvent(envelopeOf({ event: 'conversation.opened', data: { ...conversation, status: 'open', closed_at: null } }));
    if (!r.ok) throw new Error(r.message);
    if (r.event.name === 'conversation.opened') expect(r.event.data.channel.type).toBe('whatsapp');
    expect(r.event.id).toBeNull();
  });

  test.each([
    ['{not json', 'invalid_json'],
    ['[1,2]', 'not_an_object'],
    ['{"data":{}}', 'missing_event_name'],
  ])('envelope problem %j → %s', (body, reason) => {
    const r = validateEvent(parseEnvelope(Buffer.from(body)));
    expect(r).toMatchObject({ ok: false, reason });
    if (!r.ok) expect(r.message).not.toBe('');
  });

  test('unknown event, with a did-you-mean when one is close', () => {
    const near = validateEvent(envelopeOf({ event: 'conversation.closd', data: conversation }));
    expect(near).toMatchObject({ ok: false, reason: 'unknown_event' });
    if (!near.ok) expect(near.message).toContain('did you mean "conversation.closed"');
    const far = validateEvent(envelopeOf({ event: 'invoice.paid', data: {} }));
    expect(far).toMatchObject({ ok: false, reason: 'unknown_event', message: 'unknown event "invoice.paid"' });
  });

  test('invalid data: zod issues flattened to `path: message`', () => {
    const r = validateEvent(
      envelopeOf({ event: 'conversation.closed', data: { ...conversation, id: '812', status: 'bogus', channel: { id: 3, name: 'x' } } }),
    );
    expect(r).toMatchObject({ ok: false, reason: 'invalid_data' });
    if (r.ok) return;
    expect(r.issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^data\.id: /),
        expect.stringMatching(/^data\.channel\.type: /),
        expect.stringMatching(/^data\.status: .*"open"/),
      ]),
    );
    expect(r.issues).toHaveLength(3);
  });

  test('missing data is invalid data, not a crash', () => {
    const r = validateEvent(envelopeOf({ id: 'evt_2', event: 'lead.won' }));
    expect(r).toMatchObject({ ok: false, reason: 'invalid_data', issues: [expect.stringMatching(/^data: /)] });
  });

  test('never throws, whatever the envelope holds', () => {
    const odd: unknown[] = [null, 0, 'x', [], { toString: 1 }, { id: 1, event: 'lead.won', data: [] }];
    for (const data of odd) {
      for (const name of [...EVENT_NAMES, 'nope']) {
        expect(() => validateEvent({ key: 'k', id: null, name, createdAt: null, data, problem: null })).not.toThrow();
      }
    }
  });
});

describe('eventFields', () => {
  test('lists the data fields of each event from its schema', () => {
    for (const name of EVENT_NAMES) expect(eventFields(name).length).toBeGreaterThan(2);
    const fields = Object.fromEntries(eventFields('conversation.closed').map((f) => [f.path, f]));
    expect(fields['id']).toEqual({ path: 'id', type: 'int', optional: false });
    expect(fields['channel.type']?.type).toBe('string');
    expect(fields['status']?.type).toBe('"open" | "pending" | "snoozed" | "closed"');
    expect(fields['subject']?.type).toBe('string | null');
    expect(fields['assignee']?.type).toBe('object | null');
    expect(fields['assignee.type']?.type).toBe('"user" | "ai"');
  });

  test('optional fields are marked; nested stages are listed', () => {
    const lead = Object.fromEntries(eventFields('lead.won').map((f) => [f.path, f]));
    expect(lead['value']).toEqual({ path: 'value', type: 'string | null', optional: true });
    expect(lead['name']?.optional).toBe(false);
    const paths = eventFields('contact.lifecycle_changed').map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['contact_id', 'previous', 'previous.outcome', 'lifecycle.name']));
  });

  test('agrees with the schema: every listed top-level field is a schema key', () => {
    for (const name of EVENT_NAMES) {
      const keys = Object.keys(EVENT_SCHEMAS[name].shape);
      const top = eventFields(name)
        .filter((f) => !f.path.includes('.'))
        .map((f) => f.path);
      expect(top).toEqual(keys);
    }
  });
});
