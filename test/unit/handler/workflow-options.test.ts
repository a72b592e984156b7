import { describe, expect, test } from 'vitest';
import { defineLoose, definitionError } from '../../support/definitions.js';
import { DEFAULT_STATE_TTL_MS, MAX_CANCEL_ON } from '../../../src/handler/workflow-policy.js';
import { CANCEL_ON_IDS } from '../../../src/queue/waits/ops.js';

/** `cancelOn`, `state` and `waitsFor` of a handler definition: normalized into `handler.workflow`, or refused naming the handler and the option. */
const base = { id: 'sla', on: ['message.received'], handle() {} };

describe('workflow options of a handler definition', () => {
  test('defaults: no cancelOn, no state; orderBy gives the state its key', () => {
    expect(defineLoose(base).workflow).toEqual({ cancelOn: [], state: null, waitsFor: [] });
    expect(defineLoose({ ...base, orderBy: 'conversation' }).workflow.state).toEqual({ key: 'conversation', ttlMs: DEFAULT_STATE_TTL_MS });
  });

  test('at most 64 cancelOn entries: as many as cancelling a parked run forgets (src/queue/waits/ops.ts)', () => {
    const entries = (n: number) => Array.from({ length: n }, () => ({ event: 'conversation.closed', match: 'conversation' }));
    expect(defineLoose({ ...base, cancelOn: entries(64) }).workflow.cancelOn).toHaveLength(64);
    expect(definitionError({ ...base, cancelOn: entries(65) })).toContain('"cancelOn" has 65 entries; a handler may declare at most 64');
    expect(MAX_CANCEL_ON).toBe(CANCEL_ON_IDS);
  });

  test('cancelOn entries and state with a key and a ttl (text or milliseconds)', () => {
    const byName = (e: { data: { id?: number } }) => e.data.id;
    const h = defineLoose({
      ...base,
      cancelOn: [
        { event: 'message.sent', match: 'conversation' },
        { event: 'conversation.closed', match: 'conversation' },
        { event: 'lead.won', match: byName },
      ],
      state: { key: 'conversation', ttl: '7d' },
    });
    expect(h.workflow.cancelOn).toEqual([
      { event: 'message.sent', match: 'conversation' },
      { event: 'conversation.closed', match: 'conversation' },
      { event: 'lead.won', match: byName },
    ]);
    expect(h.workflow.state).toEqual({ key: 'conversation', ttlMs: 7 * 86_400_000 });
    expect(Object.isFrozen(h.workflow.cancelOn)).toBe(true);
    expect(defineLoose({ ...base, orderBy: 'conversation', state: { ttl: 60_000 } }).workflow.state).toEqual({
      key: 'conversation',
      ttlMs: 60_000,
    });
    expect(defineLoose({ ...base, orderBy: 'conversation', state: { key: byName } }).workflow.state).toEqual({
      key: byName,
      ttlMs: DEFAULT_STATE_TTL_MS,
    });
  });

  test('waitsFor: the event names, once each, frozen', () => {
    const h = defineLoose({ ...base, waitsFor: ['message.sent', 'conversation.closed', 'message.sent'] });
    expect(h.workflow.waitsFor).toEqual(['message.sent', 'conversation.closed']);
    expect(Object.isFrozen(h.workflow.waitsFor)).toBe(true);
  });

  test.each([
    [{ waitsFor: 'message.sent' }, `handler "sla": "waitsFor" must be an array of event names, got "message.sent"`],
    [{ waitsFor: ['message.snt'] }, `handler "sla": "waitsFor[0]": unknown event "message.snt"; did you mean "message.sent"?`],
    [{ waitsFor: ['message.sent', 7] }, `handler "sla": "waitsFor[1]": unknown event 7; known events: message.received,`],
    [
      { cancelOn: { event: 'message.sent', match: 'conversation' } },
      `handler "sla": "cancelOn" must be an array of { event, match }, got {"event":"message.sent","match":"conversation"}`,
    ],
    [{ cancelOn: ['message.sent'] }, `handler "sla": "cancelOn[0]" must be an object { event, match }, got "message.sent"`],
    [
      { cancelOn: [{ event: 'message.snt', match: 'conversation' }] },
      `handler "sla": "cancelOn[0].event": unknown event "message.snt"; did you mean "message.sent"?`,
    ],
    [
      { cancelOn: [{ event: 'invoice.paid', match: 'contact' }] },
      `handler "sla": "cancelOn[0].event": unknown event "invoice.paid"; known events: message.received,`,
    ],
    [{ cancelOn: [{ event: 'message.sent' }] }, `handler "sla": "cancelOn[0]" (event "message.sent") needs a "match"`],
    [
      { cancelOn: [{ event: 'message.sent', match: 'thread' }] },
      `handler "sla": "cancelOn[0].match" must be 'conversation', 'contact' or { on: 'conversation' | 'contact', where: (event) => boolean }, got "thread"`,
    ],
    [
      { cancelOn: [{ event: 'message.sent', mach: 'conversation' }] },
      `handler "sla": "cancelOn[0]" has an unknown option "mach"; did you mean "match"? (expected event and match)`,
    ],
    [
      {
        cancelOn: [
          { event: 'conversation.closed', match: 'conversation' },
          { event: 'lead.won', match: 'conversation' },
        ],
      },
      `handler "sla": "cancelOn[1].match: 'conversation'" cannot be used with "lead.won" (its event): that event carries no conversation id, so it could never match; use a function (event) => key`,
    ],
    [
      { cancelOn: [{ event: 'conversation.closed', match: 'contact' }] },
      `handler "sla": "cancelOn[0].match: 'contact'" cannot be used with "message.received" (in "on"): that event carries no contact id`,
    ],
    [{ state: 'conversation' }, `handler "sla": "state" must be an object { key?, ttl?, schema? }, got "conversation"`],
    [
      { state: {} },
      `handler "sla": "state" needs a "key" ('conversation', 'contact' or a function (event) => key) when the handler has no "orderBy"`,
    ],
    [
      { state: { key: 'conversation', ttl: 0 } },
      `handler "sla": "state.ttl" must be a positive duration such as '30d' or a number of milliseconds, got 0`,
    ],
    [{ state: { key: 'conversation', ttl: 'a month' } }, `handler "sla": "state.ttl" must be a positive duration`],
    [{ state: { key: 'conversation', ttl: '0d' } }, `handler "sla": "state.ttl" must be a positive duration`],
    [
      { state: { key: 'contact' } },
      `handler "sla": "state.key: 'contact'" cannot be used with "message.received" (in "on"): that event carries no contact id`,
    ],
    [
      { state: { key: 'conversation', tll: '1d' } },
      `handler "sla": "state" has an unknown option "tll"; did you mean "ttl"? (expected key, ttl and schema)`,
    ],
    [
      { state: { key: 'conversation', expires: '1d' } },
      `handler "sla": "state" has an unknown option "expires" (expected key, ttl and schema)`,
    ],
    [{ canelOn: [] }, `handler "sla": unknown option "canelOn"; did you mean "cancelOn"?`],
  ])('%j is refused', (options, message) => {
    expect(definitionError({ ...base, ...options })).toContain(message);
  });

  test('a built-in match must be carried by every event of "on" too (it is compared with the run\'s own event)', () => {
    const msg = definitionError({
      id: 'x',
      on: ['message.received', 'lead.won'],
      cancelOn: [{ event: 'message.sent', match: 'conversation' }],
      handle() {},
    });
    expect(msg).toBe(
      `handler "x": "cancelOn[0].match: 'conversation'" cannot be used with "lead.won" (in "on"): that event carries no conversation id, so it could never match; use a function (event) => key`,
    );
  });
});
