import { describe, expectTypeOf, it } from 'vitest';
import type { ApiClient, ApiResponse, Contact, Message, Page, SegmentRule } from '../../../src/api/index.js';

declare const api: ApiClient;

describe('public types', () => {
  it('segment rules: operators per attribute; set/not_set/never take no value', () => {
    const ok: SegmentRule[] = [
      { attribute: 'label', operator: 'has', value: 'vip' },
      { attribute: 'email', operator: 'set' },
      { attribute: 'last_seen', operator: 'never' },
      { attribute: 'created', operator: 'within_days', value: 7 },
    ];
    void ok;
    // @ts-expect-error label has no `is` operator
    const badOp: SegmentRule = { attribute: 'label', operator: 'is', value: 'vip' };
    // @ts-expect-error `set` takes no value
    const badValue: SegmentRule = { attribute: 'email', operator: 'set', value: 'x' };
    // @ts-expect-error `contains` needs a value
    const missing: SegmentRule = { attribute: 'name', operator: 'contains' };
    // @ts-expect-error unknown attribute
    const unknown: SegmentRule = { attribute: 'age', operator: 'is', value: 1 };
    void [badOp, badValue, missing, unknown];
  });

  it('contact refs: numbers or prefixed identifiers', () => {
    void api.contacts.get(1);
    void api.contacts.get('email:a@b.test');
    void api.contacts.get('id:12');
    // @ts-expect-error unknown prefix
    void api.contacts.get('nick:bob');
  });

  it('writes resolve to the record; withResponse adds replayed/status', () => {
    expectTypeOf(api.contacts.create({ name: 'A' })).resolves.toEqualTypeOf<Contact>();
    expectTypeOf(api.messages.sendText(1, 'hi').withResponse()).resolves.toEqualTypeOf<ApiResponse<Message>>();
    expectTypeOf<ApiResponse<Message>['replayed']>().toEqualTypeOf<boolean>();
  });

  it('message union and conversation patch union', () => {
    void api.messages.send(1, { type: 'buttons', text: 'Pick', buttons: ['A', 'B'] });
    // @ts-expect-error buttons need `buttons`
    void api.messages.send(1, { type: 'buttons', text: 'Pick' });
    // @ts-expect-error snoozed needs snoozed_until
    void api.conversations.update(1, { status: 'snoozed' });
    // @ts-expect-error category only with closed
    void api.conversations.update(1, { status: 'open', category: 'Resolved' });
    void api.conversations.update(1, { status: 'closed', category: 'Resolved' });
  });

  it('paginators iterate records and pages', () => {
    expectTypeOf(api.contacts.list()).toMatchTypeOf<AsyncIterable<Contact>>();
    expectTypeOf(api.contacts.list().pages()).toMatchTypeOf<AsyncIterable<Page<Contact>>>();
  });
});
