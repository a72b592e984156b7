import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../../src/handler/define.js';
import { createEvent } from '../../../src/testing/index.js';
import { eventMatchKeys } from '../../../src/worker/waits.js';
import { matchKey as ownMatchKey } from '../../../src/worker/durable.js';

/** The fan-out's keys of an event for a `cancelOn` with `{ on, where }`: the entry's key only when `where` takes the event, equal to what the run registers under. */
describe('eventMatchKeys with a keyed where in cancelOn', () => {
  const h = defineHandler({
    id: 'sla',
    on: ['message.received'],
    cancelOn: [{ event: 'conversation.closed', match: { on: 'conversation', where: (e) => e.data.subject === 'spam' } }],
    handle() {},
  });
  const own = createEvent('message.received', { data: { conversation_id: 38 } });

  it("gives the entry's key for an event where takes, the same the run registers its cancelOn under", () => {
    const registered = ownMatchKey(h.workflow.cancelOn[0]!.match, own, 'sla:0');
    expect(registered).toBe('w:sla:0:conversation:38');
    expect(eventMatchKeys(createEvent('conversation.closed', { data: { id: 38, subject: 'spam' } }), [h])).toContain(registered);
  });

  it('gives no such key for an event where refuses, nor for one that throws', () => {
    const keys = eventMatchKeys(createEvent('conversation.closed', { data: { id: 38, subject: 'solved' } }), [h]);
    expect(keys.some((k) => k.startsWith('w:'))).toBe(false);
    const throws = defineHandler({
      id: 'thrower',
      on: ['message.received'],
      handle() {},
      cancelOn: [
        {
          event: 'conversation.closed',
          match: {
            on: 'conversation',
            where: () => {
              throw new Error('x');
            },
          },
        },
      ],
    });
    expect(eventMatchKeys(createEvent('conversation.closed', { data: { id: 38 } }), [throws]).some((k) => k.startsWith('w:'))).toBe(false);
  });
});
