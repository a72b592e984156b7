import { describe, expect, it } from 'vitest';
import {
  diffContacts,
  diffConversations,
  diffLeads,
  encodeConversation,
  kindsFor,
  settledLeads,
  type Stage,
} from '../../../../src/sources/poll/snapshot-diff.js';

const R = Date.parse('2026-11-20T10:00:00Z');
const NOW = R + 300_000;
const old = '2026-11-01T00:00:00.000Z';
const thread = (id: number, status: string, assignee: { type: string; id: number } | null = null, created_at = old) => ({
  id,
  contact_id: 1,
  status,
  assignee,
  created_at,
  closed_at: null,
  last_message_at: old,
  channel: { id: 1, name: 'wa', type: 'whatsapp' },
  subject: null,
});
const stage = (id: number, name: string): Stage => ({ id, name, role: null, outcome: null });

describe('snapshot diff: conversations', () => {
  it('keeps a status letter and the assignee in a few bytes', () => {
    expect(encodeConversation(thread(1, 'open', { type: 'user', id: 7 }))).toBe('o|u7');
    expect(encodeConversation(thread(1, 'snoozed'))).toBe('s|');
    expect(encodeConversation(thread(1, 'pending', { type: 'ai', id: 2 }))).toBe('p|a2');
  });

  it('a tracked thread now open is opened; a new assignee is assigned; the same state is nothing', () => {
    const tracked = new Map([
      ['1', 's|'],
      ['2', 'o|u7'],
      ['3', 'o|u7'],
      ['4', 'p|u7'],
    ]);
    const d = diffConversations(
      tracked,
      [thread(1, 'open'), thread(2, 'open', { type: 'user', id: 8 }), thread(3, 'open', { type: 'user', id: 7 }), thread(4, 'open', null)],
      R,
      NOW,
    );
    expect(d.changes.map((c) => [c.event, c.changeKey, c.afterMs, c.observedMs])).toEqual([
      ['conversation.opened', 'conversation.opened:1', R, NOW],
      ['conversation.assigned', 'conversation.assigned:2:user:8', R, NOW],
      // Unassigned and opened: opened only (the API emits no event for unassigning).
      ['conversation.opened', 'conversation.opened:4', R, NOW],
    ]);
    expect(d.changes[1]?.data).toMatchObject({ id: 2, assignee: { type: 'user', id: 8 } });
    expect([...d.next]).toEqual([
      ['1', 'o|'],
      ['2', 'o|u8'],
      ['4', 'o|'],
    ]);
    expect(d.gone).toEqual([]);
  });

  it('back and forth: assigned to 7 again after 8 is an assignment with the key of the first', () => {
    const d = diffConversations(new Map([['2', 'o|u8']]), [thread(2, 'open', { type: 'user', id: 7 })], R, NOW);
    expect(d.changes.map((c) => c.changeKey)).toEqual(['conversation.assigned:2:user:7']);
  });

  it('untracked and created before the last refresh: it was closed, so open now is reopened; created since: new, its assignee an assignment', () => {
    const fresh = new Date(R + 10_000).toISOString();
    const d = diffConversations(
      new Map(),
      [thread(5, 'open'), thread(6, 'open', { type: 'ai', id: 1 }, fresh), thread(7, 'open', null, fresh), thread(8, 'pending')],
      R,
      NOW,
    );
    expect(d.changes.map((c) => [c.changeKey, c.afterMs])).toEqual([
      ['conversation.opened:5', R],
      ['conversation.assigned:6:ai:1', R + 10_000],
    ]);
    expect(d.next.size).toBe(4);
  });

  it('a tracked thread no longer listed is closed: forgotten, no event (conversation.closed has its own time)', () => {
    const d = diffConversations(
      new Map([
        ['1', 'o|u7'],
        ['2', 'o|'],
      ]),
      [thread(2, 'open')],
      R,
      NOW,
    );
    expect(d.gone).toEqual(['1']);
    expect(d.changes).toEqual([]);
  });
});

describe('snapshot diff: leads', () => {
  it("open leads untracked are kept by contact; those gone from the open listing are settled from their contact's leads", () => {
    const d = diffLeads(
      new Map([
        ['10', '1'],
        ['11', '2'],
        ['12', '3'],
        ['13', '4'],
      ]),
      [
        { id: 10, contact_id: 1 },
        { id: 14, contact_id: 5 },
      ],
    );
    expect([...d.next]).toEqual([['14', '5']]);
    expect([...d.gone.keys()]).toEqual(['11', '12', '13']);
    const s = settledLeads(
      d.gone,
      [
        { id: 11, contact_id: 2, name: 'A', outcome: 'won' },
        { id: 12, contact_id: 3, name: 'B', outcome: 'lost' },
        { id: 99, outcome: 'won' },
      ],
      R,
      NOW,
    );
    expect(s.changes.map((c) => [c.event, c.changeKey, c.afterMs])).toEqual([
      ['lead.won', 'lead.won:11', R],
      ['lead.lost', 'lead.lost:12', R],
    ]);
    expect(s.changes[0]?.data).toMatchObject({ id: 11, name: 'A', outcome: 'won' });
    // 13 is in none of its contact's leads: forgotten without an event.
    expect(s.forget).toEqual(['11', '12', '13']);
  });

  it("a lead still open in its contact's listing (moved between pages) stays tracked", () => {
    expect(settledLeads(new Map([['11', '2']]), [{ id: 11, outcome: 'open' }], R, NOW)).toEqual({ changes: [], forget: [] });
  });
});

describe('snapshot diff: contacts', () => {
  const stages = new Map([
    ['1', stage(1, 'Lead')],
    ['2', stage(2, 'Customer')],
  ]);
  const contact = (id: number, stageId: number | null, lifecycle: Stage | null) => ({
    id,
    name: 'x',
    email: 'x@example.com',
    lifecycle_stage_id: stageId,
    lifecycle,
    updated_at: old,
    created_at: old,
  });

  it('a different stage is lifecycle_changed with the stage it left, named from the stages seen before', () => {
    const d = diffContacts(
      new Map([
        ['5', '1'],
        ['6', ''],
        ['7', '2'],
        ['8', undefined],
      ]),
      [
        contact(5, 2, stage(2, 'Customer')),
        contact(6, 1, stage(1, 'Lead')),
        contact(7, 2, stage(2, 'Customer')),
        contact(8, 1, stage(1, 'Lead')),
      ],
      stages,
      R,
      NOW,
    );
    expect(d.changes.map((c) => c.data)).toEqual([
      { contact_id: 5, previous: stage(1, 'Lead'), lifecycle: stage(2, 'Customer') },
      { contact_id: 6, previous: null, lifecycle: stage(1, 'Lead') },
    ]);
    expect(d.changes.map((c) => c.changeKey)).toEqual(['contact.lifecycle_changed:5:1:2', 'contact.lifecycle_changed:6:none:1']);
    // 8 was not tracked (new since): kept from now on, no event.
    expect([...d.next]).toEqual([
      ['5', '2'],
      ['6', '1'],
      ['8', '1'],
    ]);
    expect([...d.stages.keys()].sort()).toEqual(['1', '2']);
  });

  it('a stage never seen named is carried by id alone; no personal data goes into the event', () => {
    const d = diffContacts(new Map([['5', '9']]), [contact(5, 2, stage(2, 'Customer'))], new Map(), R, NOW);
    expect(d.changes[0]?.data).toEqual({
      contact_id: 5,
      previous: { id: 9, name: '', role: null, outcome: null },
      lifecycle: stage(2, 'Customer'),
    });
    expect(JSON.stringify(d.changes[0]?.data)).not.toContain('example.com');
  });
});

describe('kindsFor', () => {
  it('only the kinds the subscribed events need', () => {
    expect(kindsFor(['message.received'])).toEqual([]);
    expect(kindsFor(['lead.lost', 'contact.lifecycle_changed'])).toEqual(['leads', 'contacts']);
    expect(kindsFor(['conversation.assigned'])).toEqual(['conversations']);
  });
});
