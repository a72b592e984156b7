import { describe, expect, it } from 'vitest';
import {
  CHANGE_KEY_EVENTS,
  changeKey,
  hasChangeKey,
  isRepeatableChange,
  reconcileDeliveryKey,
  reconciledAfter,
} from '../../../src/events/change-key.js';
import { EVENT_NAMES } from '../../../src/spec/events.js';

const conversation = {
  id: 42,
  contact_id: 7,
  status: 'closed',
  created_at: '2025-03-04T10:00:00Z',
  closed_at: '2025-03-04T12:30:00.000+01:00',
};

describe('changeKey', () => {
  it('messages and leads: event and record id', () => {
    expect(changeKey('message.received', { id: 9, created_at: '2025-03-04T10:00:00Z' })).toBe('message.received:9');
    expect(changeKey('message.sent', { id: 9 })).toBe('message.sent:9');
    expect(changeKey('lead.created', { id: 3 })).toBe('lead.created:3');
    expect(changeKey('lead.won', { id: 3 })).toBe('lead.won:3');
    expect(changeKey('lead.lost', { id: 3 })).toBe('lead.lost:3');
  });

  it("contacts and conversations: event, id and the record's own time, normalised to UTC ISO", () => {
    expect(changeKey('contact.created', { id: 5, created_at: '2025-03-04T10:00:00+02:00' })).toBe(
      'contact.created:5:2025-03-04T08:00:00.000Z',
    );
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

  it('moves without a time: opened by thread, assigned by thread and assignee, lifecycle by contact, stage left and stage reached', () => {
    expect(changeKey('conversation.opened', conversation)).toBe('conversation.opened:42');
    expect(changeKey('conversation.assigned', { ...conversation, assignee: { type: 'user', id: 7 } })).toBe(
      'conversation.assigned:42:user:7',
    );
    expect(changeKey('conversation.assigned', { ...conversation, assignee: { type: 'ai', id: 7 } })).toBe('conversation.assigned:42:ai:7');
    expect(changeKey('conversation.assigned', { ...conversation, assignee: null })).toBeNull();
    const stage = (id: number) => ({ id, name: `S${id}`, role: null, outcome: null });
    expect(changeKey('contact.lifecycle_changed', { contact_id: 5, previous: stage(1), lifecycle: stage(2) })).toBe(
      'contact.lifecycle_changed:5:1:2',
    );
    expect(changeKey('contact.lifecycle_changed', { contact_id: 5, previous: null, lifecycle: stage(2) })).toBe(
      'contact.lifecycle_changed:5:none:2',
    );
    // There and back: two keys, each repeatable (a second real move of the same kind is a new change).
    expect(changeKey('contact.lifecycle_changed', { contact_id: 5, previous: stage(2), lifecycle: stage(1) })).toBe(
      'contact.lifecycle_changed:5:2:1',
    );
    expect(changeKey('contact.lifecycle_changed', { contact_id: 5, previous: stage(1) })).toBeNull();
    expect(changeKey('contact.lifecycle_changed', { contact_id: 'a b', previous: null, lifecycle: stage(2) })).toBeNull();
    for (const k of [
      'conversation.opened:42',
      'conversation.assigned:42:user:7',
      'contact.lifecycle_changed:5:1:2',
      'lead.won:3',
      'lead.lost:3',
    ])
      expect(isRepeatableChange(k)).toBe(true);
    for (const k of ['conversation.closed:42:2025-03-04T11:30:00.000Z', 'message.received:9', 'lead.created:3'])
      expect(isRepeatableChange(k)).toBe(false);
  });

  it('a reconciled copy inferred from the snapshot names when the state before was last seen; others name none', () => {
    expect(reconcileDeliveryKey('lead.won:3', null, 1_700_000_000_123)).toBe('rc:lead.won:3~1700000000123');
    expect(reconcileDeliveryKey('lead.won:3', 'sandbox-1', 5)).toBe('rc:@sandbox-1:lead.won:3~5');
    expect(reconciledAfter('rc:@sandbox-1:conversation.assigned:42:user:7~1700000000123')).toBe(1_700_000_000_123);
    expect(reconciledAfter(reconcileDeliveryKey('lead.won:3'))).toBeNull();
    expect(reconciledAfter('evt_123~5')).toBeNull();
  });

  it('null for records missing what the key needs', () => {
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
      const lifecycle = { contact_id: 1, previous: null, lifecycle: { id: 2 } };
      expect(
        changeKey(e, {
          id: 1,
          created_at: '2025-03-04T10:00:00Z',
          closed_at: '2025-03-04T10:00:00Z',
          assignee: { type: 'user', id: 3 },
          ...lifecycle,
        }),
      ).not.toBeNull();
    }
    expect(CHANGE_KEY_EVENTS).toHaveLength(11);
    expect(hasChangeKey('order.created')).toBe(false);
  });
});
