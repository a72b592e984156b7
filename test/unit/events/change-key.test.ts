import { describe, expect, it } from 'vitest';
import { CHANGE_KEY_EVENTS, changeKey, hasChangeKey } from '../../../src/events/change-key.js';
import { EVENT_NAMES } from '../../../src/spec/events.js';

const conversation = { id: 42, contact_id: 7, status: 'closed', created_at: '2025-03-04T10:00:00Z', closed_at: '2025-03-04T12:30:00.000+01:00' };

describe('changeKey', () => {
  it('messages and leads: event and record id', () => {
    expect(changeKey('message.received', { id: 9, created_at: '2025-03-04T10:00:00Z' })).toBe('message.received:9');
    expect(changeKey('message.sent', { id: 9 })).toBe('message.sent:9');
    expect(changeKey('lead.created', { id: 3 })).toBe('lead.created:3');
    expect(changeKey('lead.won', { id: 3 })).toBe('lead.won:3');
    expect(changeKey('lead.lost', { id: 3 })).toBe('lead.lost:3');
  });

  it('contacts and conversations: event, id and the record\'s own time, normalised to UTC ISO', () => {
    expect(changeKey('contact.created', { id: 5, created_at: '2025-03-04T10:00:00+02:00' })).toBe('contact.created:5:2025-03-04T08:00:00.000Z');
    expect(changeKey('conversation.created', conversation)).toBe('conversation.created:42:2025-03-04T10:00:00.000Z');
    expect(changeKey('conversation.closed', conversation)).toBe('conversation.closed:42:2025-03-04T11:30:00.000Z');
  });

  it('two spellings of one instant give one key; another close of the same thread another key', () => {
    const a = changeKey('conversation.closed', { ...conversation, closed_at: '2025-03-04T11:30:00Z' });
    const b = changeKey('conversation.closed', { ...conversation, closed_at: '2025-03-04T13:30:00.000+02:00' });
    expect(a).toBe(b);
    expect(changeKey('conversation.closed', { ...conversation, closed_at: '2025-03-05T09:00:00Z' })).not.toBe(a);
  });

  it('a real delivery and the listed record map to the same key (unknown fields ignored)', () => {
    const listed = { id: 9, conversation_id: 1, direction: 'inbound', created_at: '2025-03-04T10:00:00Z' };
    expect(changeKey('message.received', { ...listed, extra: true })).toBe(changeKey('message.received', listed));
  });

  it('null for events whose records carry no time of the move, and for records missing what the key needs', () => {
    for (const e of ['conversation.opened', 'conversation.assigned', 'contact.lifecycle_changed']) expect(changeKey(e, conversation)).toBeNull();
    expect(changeKey('conversation.closed', { ...conversation, closed_at: null })).toBeNull();
    expect(changeKey('contact.created', { id: 5 })).toBeNull();
    expect(changeKey('contact.created', { id: 5, created_at: 'yesterday' })).toBeNull();
    expect(changeKey('message.received', { id: 'a b' })).toBeNull();
    expect(changeKey('message.received', null)).toBeNull();
    expect(changeKey('message.received', [])).toBeNull();
    expect(changeKey('nope', { id: 1 })).toBeNull();
  });

  it('CHANGE_KEY_EVENTS are catalogue events, each with a key', () => {
    for (const e of CHANGE_KEY_EVENTS) {
      expect(EVENT_NAMES).toContain(e);
      expect(hasChangeKey(e)).toBe(true);
      expect(changeKey(e, { id: 1, created_at: '2025-03-04T10:00:00Z', closed_at: '2025-03-04T10:00:00Z' })).not.toBeNull();
    }
    expect(hasChangeKey('conversation.opened')).toBe(false);
  });
});
