import { describe, expect, it } from 'vitest';
import { changeKey } from '../../../../src/events/change-key.js';
import { parseEnvelope } from '../../../../src/events/envelope.js';
import { validateEvent } from '../../../../src/events/catalogue.js';
import { deliveryBytes } from '../../../../src/queue/delivery.js';
import { inferContact, inferConversation, inferLead, inferMessage, mayHoldMessages } from '../../../../src/sources/reconcile/infer.js';
import { synthesize } from '../../../../src/sources/reconcile/synthesize.js';

const w = { since: Date.parse('2025-03-04T10:00:00Z'), until: Date.parse('2025-03-04T11:00:00Z') };
const IN = '2025-03-04T10:30:00Z';
const BEFORE = '2025-03-04T09:00:00Z';
const AFTER = '2025-03-04T11:00:00Z';
const names = (xs: { event: string }[]) => xs.map((x) => x.event);

describe('inference per event', () => {
  it('contact.created: created in the window', () => {
    expect(names(inferContact({ id: 1, created_at: IN }, w))).toEqual(['contact.created']);
    expect(inferContact({ id: 1, created_at: BEFORE }, w)).toEqual([]);
    // The window is [since, until).
    expect(inferContact({ id: 1, created_at: AFTER }, w)).toEqual([]);
  });

  it('conversation.created and conversation.closed, each by its own time', () => {
    const c = { id: 2, status: 'closed', created_at: IN, closed_at: IN, last_message_at: IN };
    expect(names(inferConversation(c, w))).toEqual(['conversation.created', 'conversation.closed']);
    expect(names(inferConversation({ ...c, created_at: BEFORE }, w))).toEqual(['conversation.closed']);
    // Reopened since: its close is no longer visible.
    expect(names(inferConversation({ ...c, created_at: BEFORE, status: 'open' }, w))).toEqual([]);
    expect(names(inferConversation({ ...c, created_at: BEFORE, closed_at: BEFORE }, w))).toEqual([]);
  });

  it('message.received (inbound) and message.sent (outbound, sent, not a note)', () => {
    const m = { id: 3, conversation_id: 2, type: 'message', created_at: IN };
    expect(names(inferMessage({ ...m, direction: 'inbound', status: null }, w))).toEqual(['message.received']);
    expect(names(inferMessage({ ...m, direction: 'outbound', status: 'sent' }, w))).toEqual(['message.sent']);
    expect(inferMessage({ ...m, direction: 'outbound', status: 'failed' }, w)).toEqual([]);
    expect(inferMessage({ ...m, type: 'note', direction: null, status: null }, w)).toEqual([]);
    expect(inferMessage({ ...m, direction: 'inbound', created_at: BEFORE }, w)).toEqual([]);
  });

  it('only threads whose latest message is not older than the window are read for messages', () => {
    expect(mayHoldMessages({ last_message_at: IN }, w)).toBe(true);
    expect(mayHoldMessages({ last_message_at: AFTER }, w)).toBe(true);
    expect(mayHoldMessages({ last_message_at: BEFORE }, w)).toBe(false);
    // Created after the window: none of its messages can be in it.
    expect(mayHoldMessages({ created_at: AFTER, last_message_at: AFTER }, w)).toBe(false);
  });

  it('lead.created, and lead.won / lead.lost for a lead created in the window', () => {
    expect(names(inferLead({ id: 4, created_at: IN, outcome: 'open' }, w))).toEqual(['lead.created']);
    expect(names(inferLead({ id: 4, created_at: IN, outcome: 'won' }, w))).toEqual(['lead.created', 'lead.won']);
    expect(names(inferLead({ id: 4, created_at: IN, outcome: 'lost' }, w))).toEqual(['lead.created', 'lead.lost']);
    // No time of the outcome: a lead created before the window is not inferred (documented).
    expect(inferLead({ id: 4, created_at: BEFORE, outcome: 'won' }, w)).toEqual([]);
    expect(inferLead({ id: 4, outcome: 'won' }, w)).toEqual([]);
  });

  it('an inferred event carries the key its real delivery maps to', () => {
    const c = { id: 2, status: 'closed', created_at: BEFORE, closed_at: IN };
    const [e] = inferConversation(c, w);
    expect(e?.changeKey).toBe(changeKey('conversation.closed', c));
    expect(e?.at).toBe('2025-03-04T10:30:00.000Z');
  });
});

describe('synthesize', () => {
  const message = {
    id: 9,
    conversation_id: 2,
    type: 'message',
    direction: 'inbound',
    sender_type: 'contact',
    user_id: null,
    body: 'hi',
    content_type: 'text',
    status: null,
    created_at: IN,
  };

  it('a delivery keyed by the change key, marked reconcile, whose envelope validates as the event', () => {
    const [e] = inferMessage(message, w);
    const d = synthesize(e!, '2025-03-04T12:00:00.000Z');
    expect(d).toMatchObject({
      key: 'rc:message.received:9',
      name: 'message.received',
      source: 'reconcile',
      receivedAt: '2025-03-04T12:00:00.000Z',
    });
    const v = validateEvent(parseEnvelope(deliveryBytes(d)));
    expect(v.ok).toBe(true);
    if (v.ok) {
      expect(v.event.name).toBe('message.received');
      expect(v.event.createdAt).toBe('2025-03-04T10:30:00.000Z');
      expect(changeKey(v.event.name, v.event.data)).toBe('message.received:9');
    }
  });

  it('is deterministic: the same change gives the same delivery key and envelope id', () => {
    const [a] = inferMessage(message, w);
    const [b] = inferMessage({ ...message }, w);
    expect(synthesize(a!, 'x').body).toBe(synthesize(b!, 'y').body);
  });
});
