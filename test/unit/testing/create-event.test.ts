import { describe, expect, it } from 'vitest';
import { createEvent, DeliveryError, loadFixture, toEvent } from '../../../src/testing/index.js';
import { EVENT_NAMES } from '../../../src/events/catalogue.js';

describe('createEvent', () => {
  it("without overrides is the shipped fixture's event, id included, for every event of the catalogue", async () => {
    for (const name of EVENT_NAMES) expect(createEvent(name)).toEqual(toEvent(await loadFixture(name), name));
  });

  it('deep-merges data: objects merge, arrays and other values replace; the result is validated and typed', () => {
    const closed = createEvent('conversation.closed', { data: { assignee: { id: 22 }, channel: { name: 'WA' } } });
    expect(closed.data.assignee).toEqual({ type: 'user', id: 22 });
    expect(closed.data.channel).toEqual({ id: 23, name: 'WA', type: 'whatsapp' });
    expect(closed.data.contact_id).toBe(35);
    expect(createEvent('conversation.closed', { data: { assignee: null } }).data.assignee).toBeNull();
    const won = createEvent('lead.won', { data: { value: '99.00' }, createdAt: '2026-01-01T00:00:00Z' });
    expect(won).toMatchObject({
      name: 'lead.won',
      createdAt: '2026-01-01T00:00:00Z',
      data: { id: 48, contact_id: 36, value: '99.00', outcome: 'won' },
    });
  });

  it('gives a changed event an id of its own, derived from its content; an explicit id (or null) wins', () => {
    const fixtureId = createEvent('lead.won').id;
    const a = createEvent('lead.won', { data: { contact_id: 35 } });
    expect(a.id).toMatch(/^evt_test_[0-9a-f]{24}$/);
    expect(a.id).not.toBe(fixtureId);
    expect(createEvent('lead.won', { data: { contact_id: 35 } }).id).toBe(a.id);
    expect(createEvent('lead.won', { data: { contact_id: 36 } }).id).toBe(fixtureId);
    expect(createEvent('lead.won', { id: 'evt_mine', data: { contact_id: 35 } }).id).toBe('evt_mine');
    expect(createEvent('lead.won', { id: null }).id).toBeNull();
  });

  it('refuses what the catalogue refuses, naming the field, and an unknown event with a did-you-mean', () => {
    expect(() => createEvent('lead.won', { data: { contact_id: 'x' as never } })).toThrow(
      /^createEvent\("lead.won"\): data of "lead.won" does not match its schema \(1 issue\): data\.contact_id: .*expected number/,
    );
    expect(() => createEvent('lead.won', { data: { contact_id: 'x' as never } })).toThrow(DeliveryError);
    expect(() => createEvent('conversation.closed', { data: { assignee: { type: 'robot' as never } } })).toThrow(
      /: data\.assignee\.type: /,
    );
    expect(() => createEvent('lead.wn' as never)).toThrow(
      new DeliveryError('createEvent: unknown event "lead.wn"; did you mean "lead.won"? (expected one of EVENT_NAMES)'),
    );
  });
});
