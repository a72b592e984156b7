import { UnrecoverableError as BullUnrecoverable } from 'bullmq';
import pino from 'pino';
import { describe, expect, test } from 'vitest';
import type { WorkspaceEvent } from '../../../src/events/catalogue.js';
import {
  ABILITIES,
  defineHandler,
  HANDLER,
  type Jsonified,
  HandlerDefinitionError,
  isHandler,
  HandlerConfigError,
  NonRetriableError,
  UnrecoverableError,
  type HandlerContext,
} from '../../../src/handler/define.js';

/** Lets tests hand defineHandler what a `.js` module could: anything. */
const defineLoose = defineHandler as (def: unknown) => ReturnType<typeof defineHandler>;

const ctx: HandlerContext = {
  api: undefined as unknown as HandlerContext['api'],
  settings: {},
  // What ctx.step returns: the value after a JSON round trip.
  step: async <T>(_name: string, fn: () => Promise<T>) => (JSON.parse(JSON.stringify({ v: await fn() })) as { v: Jsonified<T> }).v,
  log: pino({ level: 'silent' }),
  delivery: { key: 'evt_1', receivedAt: '2025-03-04T10:20:01+01:00', attempt: 1, source: 'webhook' },
  debounced: null,
  workspace: { id: 'default' },
  signal: new AbortController().signal,
  // Workflow members (src/handler/workflow.ts): these tests never sleep, wait or keep state.
  sleep: async () => {},
  sleepUntil: async () => {},
  waitForEvent: async () => null,
  state: {
    get: async () => null,
    set: async () => {},
    update: async () => {
      throw new Error('no state in these tests');
    },
  },
};

const leadWon: WorkspaceEvent<'lead.won'> = {
  id: 'evt_1',
  name: 'lead.won',
  createdAt: null,
  data: { id: 9, contact_id: 4401, name: 'Annual plan', value: '1200.00', source: 'website', outcome: 'won' },
};

function definitionError(def: unknown): HandlerDefinitionError {
  try {
    defineLoose(def);
  } catch (e) {
    expect(e).toBeInstanceOf(HandlerDefinitionError);
    return e as HandlerDefinitionError;
  }
  throw new Error('expected defineHandler to throw');
}

describe('defineHandler', () => {
  test('returns a frozen, branded handler', () => {
    const h = defineHandler({ id: 'lead-won', on: ['lead.won'], abilities: ['contacts:write', 'contacts:write'], handle() {} });
    expect(isHandler(h)).toBe(true);
    expect(h[HANDLER]).toBe(true);
    expect(Object.isFrozen(h)).toBe(true);
    expect(Object.isFrozen(h.on)).toBe(true);
    expect(h.on).toEqual(['lead.won']);
    expect(h.abilities).toEqual(['contacts:write']);
    expect(() => {
      (h as { id: string }).id = 'other';
    }).toThrow(TypeError);
  });

  test('abilities default to none', () => {
    expect(defineHandler({ id: 'a', on: ['lead.lost'], handle() {} }).abilities).toEqual([]);
  });

  test('isHandler rejects look-alikes', () => {
    expect(isHandler({ id: 'x', on: ['lead.won'], handle() {} })).toBe(false);
    expect(isHandler(null)).toBe(false);
    expect(isHandler({ [Symbol.for('switchyard.handler')]: true })).toBe(true);
  });

  test('handle always returns a promise; a synchronous throw becomes a rejection', async () => {
    const seen: unknown[] = [];
    const ok = defineHandler({ id: 'sync', on: ['lead.won'], handle: (e) => void seen.push(e.data.name) });
    await expect(ok.handle(leadWon, ctx)).resolves.toBeUndefined();
    expect(seen).toEqual(['Annual plan']);
    const bad = defineHandler({
      id: 'throws',
      on: ['lead.won'],
      handle() {
        throw new NonRetriableError('no such stage');
      },
    });
    const p = bad.handle(leadWon, ctx);
    expect(p).toBeInstanceOf(Promise);
    await expect(p).rejects.toBeInstanceOf(NonRetriableError);
  });

  test('handle runs with the definition as `this`', async () => {
    const def = {
      id: 'with-helper',
      on: ['lead.won'] as const,
      label: 'customer',
      async handle(this: { label: string }) {
        expect(this.label).toBe('customer');
      },
    };
    await defineHandler(def).handle(leadWon, ctx);
  });

  test('NonRetriableError is our own class, not bullmq’s; UnrecoverableError (deprecated) and HandlerConfigError are NonRetriableErrors', () => {
    const err = new NonRetriableError('stop', { cause: new Error('why') });
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(BullUnrecoverable);
    expect([err.name, err.message, (err.cause as Error).message]).toEqual(['NonRetriableError', 'stop', 'why']);
    const old = new UnrecoverableError('stop');
    expect(old).toBeInstanceOf(NonRetriableError);
    expect(old).not.toBeInstanceOf(BullUnrecoverable);
    // Its name stays, so dead-letter reasons read as before.
    expect(old.name).toBe('UnrecoverableError');
    expect(new HandlerConfigError('x')).toBeInstanceOf(NonRetriableError);
  });

  test('ABILITIES holds the spec’s 13 abilities and the lead pair', () => {
    expect(ABILITIES).toContain('messages:send');
    expect(ABILITIES).toContain('leads:write');
    expect(ABILITIES).toHaveLength(15);
  });
});

describe('defineHandler validation (for .js modules)', () => {
  test.each([undefined, '', 'Follow-Up', '-lead', 'a b', 'é', 42])('invalid id %j', (id) => {
    const e = definitionError({ id, on: ['lead.won'], handle() {} });
    expect(e.code).toBe('invalid_handler');
    expect(e.handlerId).toBeNull();
    expect(e.message).toMatch(/handler id .* is invalid/);
  });

  test.each(['a', '0', 'follow-up-task', 'team.lead_won-2'])('valid id %j', (id) => {
    expect(defineLoose({ id, on: ['lead.won'], handle() {} }).id).toBe(id);
  });

  test('on must be a non-empty array', () => {
    expect(definitionError({ id: 'x', on: [], handle() {} }).message).toBe('handler "x": "on" must be a non-empty array of event names');
    expect(definitionError({ id: 'x', on: 'lead.won', handle() {} }).handlerId).toBe('x');
  });

  test('unknown event with a did-you-mean', () => {
    const e = definitionError({ id: 'closer', on: ['conversation.closed', 'conversation.closd'], handle() {} });
    expect(e.message).toBe('handler "closer": unknown event "conversation.closd"; did you mean "conversation.closed"?');
  });

  test('unknown event far from every name lists the known ones', () => {
    const e = definitionError({ id: 'x', on: ['invoice.paid'], handle() {} });
    expect(e.message).toContain('unknown event "invoice.paid"; known events: message.received,');
    expect(definitionError({ id: 'x', on: [7], handle() {} }).message).toContain('unknown event 7');
  });

  test('an event listed twice', () => {
    expect(definitionError({ id: 'x', on: ['lead.won', 'lead.won'], handle() {} }).message).toContain('listed twice');
  });

  test('unknown ability with a did-you-mean', () => {
    expect(definitionError({ id: 'x', on: ['lead.won'], abilities: ['contact:write'], handle() {} }).message).toBe(
      'handler "x": unknown ability "contact:write"; did you mean "contacts:write"?',
    );
    expect(definitionError({ id: 'x', on: ['lead.won'], abilities: 'tasks:write', handle() {} }).message).toContain(
      '"abilities" must be an array',
    );
  });

  test('handle must be a function; the definition must be an object', () => {
    expect(definitionError({ id: 'x', on: ['lead.won'] }).message).toContain('"handle" must be a function');
    expect(definitionError(null).message).toContain('expects an object');
  });
});
