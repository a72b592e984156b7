import { describe, expect, it } from 'vitest';
import { matchesWhere, parseWhere, parseWheres, WhereError } from '../../../src/events/where.js';

/* `--where` conditions: parsed and checked against the catalogue, then matched against an event's data. */

const message = { id: 5, conversation_id: 38, body: 'I want a REFUND for my order', direction: 'inbound', status: null, user_id: null };
const contact = { id: 7, name: 'Zoe Adams', email: 'zoe@example.com', phone: '+44 20 7946 0958', blocked: false };
const order = {
  id: 9,
  total: '120.00',
  items: [
    { sku: 'A-1', quantity: 2 },
    { sku: 'B-7', quantity: 1 },
  ],
  payment: { status: 'paid' },
};

const problem = (text: string, event?: Parameters<typeof parseWhere>[1]): string => {
  try {
    parseWhere(text, event);
  } catch (err) {
    expect(err).toBeInstanceOf(WhereError);
    return (err as Error).message;
  }
  throw new Error(`expected "${text}" to be refused`);
};
const match = (texts: string[], name: string, data: unknown): boolean => matchesWhere(parseWheres(texts), name, data);

describe('--where: parsing against the catalogue', () => {
  it('splits path, operator and value (the value kept as is, = inside it included)', () => {
    expect(parseWhere('data.body~a=b')).toMatchObject({ path: 'data.body', keys: ['body'], op: '~', value: 'a=b', quoted: false });
    expect(parseWhere('data.email!=zoe@example.com')).toMatchObject({ op: '!=', value: 'zoe@example.com' });
    expect(parseWhere('data.items[].sku="A-1"')).toMatchObject({ keys: ['items', 'sku'], op: '=', value: 'A-1', quoted: true });
    expect(parseWhere('data.subject=')).toMatchObject({ op: '=', value: '' });
  });

  it('finds the events whose data has the path; --event narrows to one', () => {
    expect(parseWhere('data.email=x').events).toEqual(['contact.created']);
    expect(parseWhere('data.conversation_id=38').events).toEqual(
      expect.arrayContaining(['message.received', 'message.sent', 'order.created']),
    );
    expect(parseWheres(['data.conversation_id=38', 'data.body~refund']).events).toEqual(['message.received', 'message.sent']);
    expect(parseWhere('data.body~x', 'message.sent').events).toEqual(['message.sent']);
  });

  it('a malformed expression says what was wrong and the form expected', () => {
    expect(problem('data.body')).toBe(
      '--where "data.body": no operator; expected <path><op><value> with op = (equals), != (differs) or ~ (contains), e.g. data.conversation_id=38',
    );
    expect(problem('=38')).toMatch(/no path before =/);
    expect(problem('data.body~')).toBe('--where "data.body~": nothing after ~: expected the text to look for');
    expect(problem('data.id==3')).toBe('--where "data.id==3": "==": equals is one =, e.g. data.id=3');
    expect(problem('data..id=3')).toMatch(/"data\.\.id" is not a field path: expected names joined by dots/);
    expect(problem('data=3')).toMatch(/"data" is not under data: paths start with data\./);
    expect(problem('conversation_id=38')).toBe(
      '--where "conversation_id=38": "conversation_id" is not under data: paths start with data., the event\'s fields; did you mean "data.conversation_id"?',
    );
  });

  it('a path no event has is refused with a did-you-mean, by spelling or by the field name', () => {
    expect(problem('data.conversaton_id=38')).toBe(
      '--where "data.conversaton_id=38": no event of the catalogue has a field "data.conversaton_id"; did you mean data.conversation_id? (`switchyard events` lists the fields)',
    );
    expect(problem('data.contact.email=zoe@example.com')).toMatch(
      /no event of the catalogue has a field "data\.contact\.email"; did you mean data\.email\?/,
    );
    expect(problem('data.email=zoe@example.com', 'message.received')).toBe(
      '--where "data.email=zoe@example.com": message.received has no field "data.email" (`switchyard events message.received` lists the fields)',
    );
    expect(() => parseWheres(['data.email=a', 'data.body~b'])).toThrow(/no event of the catalogue has all these fields/);
  });

  it('a value the field can never hold is refused: = on an object, a word for a number, an unknown enum member', () => {
    expect(problem('data.channel=whatsapp')).toMatch(
      /data\.channel is an object: compare one of its fields \(data\.channel\.id, .*\) or use ~/,
    );
    expect(problem('data.conversation_id=abc')).toBe(
      '--where "data.conversation_id=abc": data.conversation_id is a number: expected a number after =, got "abc"',
    );
    expect(problem('data.status=opne', 'conversation.closed')).toMatch(
      /data\.status is one of open, pending, snoozed, closed, not "opne"; did you mean open\?/,
    );
    expect(parseWhere('data.channel~whats').op).toBe('~');
    expect(parseWhere('data.assignee=null').value).toBe('null');
  });
});

describe('--where: matching an event', () => {
  it('= equals as text, or as a number when both are numbers; a quoted value as text only', () => {
    expect(match(['data.conversation_id=38'], 'message.received', message)).toBe(true);
    expect(match(['data.conversation_id=38.0'], 'message.received', message)).toBe(true);
    expect(match(['data.conversation_id=39'], 'message.received', message)).toBe(false);
    expect(match(['data.total=120'], 'order.created', order)).toBe(true);
    expect(match(['data.total="120"'], 'order.created', order)).toBe(false);
    expect(match(['data.email=zoe@example.com'], 'contact.created', contact)).toBe(true);
    expect(match(['data.email=ZOE@example.com'], 'contact.created', contact)).toBe(false);
    expect(match(['data.blocked=false'], 'contact.created', contact)).toBe(true);
    expect(match(['data.status=null'], 'message.received', message)).toBe(true);
  });

  it('~ contains, ignoring case, also inside an object', () => {
    expect(match(['data.body~refund'], 'message.received', message)).toBe(true);
    expect(match(['data.body~refunds'], 'message.received', message)).toBe(false);
    expect(match(['data.payment~PAID'], 'order.created', order)).toBe(true);
    expect(match(['data.conversation_id~3'], 'message.received', message)).toBe(true);
  });

  it('!= needs the field there and no value equal to it', () => {
    expect(match(['data.direction!=outbound'], 'message.received', message)).toBe(true);
    expect(match(['data.direction!=inbound'], 'message.received', message)).toBe(false);
    expect(match(['data.direction!=outbound'], 'message.received', { id: 1 })).toBe(false);
  });

  it('an array path matches when any item does; every condition must hold; another event never matches', () => {
    expect(match(['data.items.sku=B-7'], 'order.created', order)).toBe(true);
    expect(match(['data.items[].sku=B-7', 'data.items[].quantity=2'], 'order.created', order)).toBe(true);
    expect(match(['data.items[].sku=C-1'], 'order.created', order)).toBe(false);
    expect(match(['data.conversation_id=38', 'data.body~nothing'], 'message.received', message)).toBe(false);
    expect(match(['data.conversation_id=38'], 'conversation.opened', { id: 38, conversation_id: 38 })).toBe(false);
    expect(match(['data.body~refund'], 'message.received', null)).toBe(false);
  });
});
