import { describe, expect, it } from 'vitest';
import { RequestValidationError, createApiClient, type ApiClient } from '../../../src/api/index.js';
import { fakeFetch, settle } from '../../support/fake-fetch.js';

const { fetch, calls } = fakeFetch(() => ({ status: 500 }));
const api: ApiClient = createApiClient({
  baseUrl: 'http://localhost:1/api/v1',
  token: 't',
  fetch,
  clock: () => Date.parse('2026-03-01T00:00:00Z'),
  retry: { maxAttempts: 1 },
});
const s = (n: number, ch = 'x') => ch.repeat(n);

/** Runs a call expected to be refused before sending (a call, or the first page of a listing); returns the error. */
async function refused(fn: () => unknown): Promise<RequestValidationError> {
  const { err, sent } = await settle(fn, calls);
  expect(sent).toBe(0); // nothing was sent
  expect(err).toBeInstanceOf(RequestValidationError);
  return err as RequestValidationError;
}

describe('pre-send validation (spec limits)', () => {
  it.each([
    ['contact name 255', () => api.contacts.create({ name: s(256) }), 'name'],
    ['contact name required', () => api.contacts.create({ name: '' }), 'name'],
    ['contact phone 32', () => api.contacts.create({ name: 'a', phone: s(33, '1') }), 'phone'],
    ['contact email format', () => api.contacts.update(1, { email: 'not-an-email' }), 'email'],
    ['contact ref', () => api.contacts.get('nickname:bob' as never), 'contact'],
    ['per_page max 100', () => api.contacts.list({ per_page: 101 }), 'per_page'],
    ['per_page min 1', () => api.deals.list({ per_page: 0 }), 'per_page'],
    ['search per_page', () => api.contacts.search({ per_page: 0 }), 'per_page'],
    [
      'unknown attribute',
      () => api.contacts.search({ match: [[{ attribute: 'age', operator: 'is', value: 3 } as never]] }),
      'match.0.0.attribute',
    ],
    [
      'inherited key is no attribute',
      () => api.contacts.search({ match: [[{ attribute: 'constructor', operator: 'is', value: 3 } as never]] }),
      'match.0.0.attribute',
    ],
    [
      'operator not allowed',
      () => api.contacts.search({ match: [[{ attribute: 'label', operator: 'is', value: 'x' } as never]] }),
      'match.0.0.operator',
    ],
    [
      'set takes no value',
      () => api.contacts.search({ match: [[{ attribute: 'email', operator: 'set', value: 'x' } as never]] }),
      'match.0.0.value',
    ],
    [
      'contains needs a value',
      () => api.contacts.search({ match: [[], [{ attribute: 'name', operator: 'contains' } as never]] }),
      'match.1.0.value',
    ],
    ['merge sides', () => api.contacts.merge({ survivor: 1 } as never), 'loser'],
    ['labels min 1', () => api.contacts.labels.add(1, []), 'labels'],
    ['text 4096', () => api.messages.sendText(1, s(4097)), 'text'],
    ['reply_to 255', () => api.messages.sendText(1, 'hi', { reply_to: s(256) }), 'reply_to'],
    ['buttons 1..10', () => api.messages.sendButtons(1, 'pick', []), 'buttons'],
    [
      'buttons max 10',
      () =>
        api.messages.sendButtons(
          1,
          'pick',
          Array.from({ length: 11 }, (_, i) => `b${i}`),
        ),
      'buttons',
    ],
    ['button 100', () => api.messages.sendButtons(1, 'pick', ['ok', s(101)]), 'buttons.1'],
    ['buttons unique', () => api.messages.sendButtons(1, 'pick', ['Yes', 'No', 'Yes']), 'buttons.2'],
    ['url 2048', () => api.messages.sendAttachment(1, { url: `https://x.test/${s(2048)}` }), 'url'],
    ['caption 1024', () => api.messages.sendAttachment(1, { url: 'https://x.test/a.png', caption: s(1025) }), 'caption'],
    ['file_name 255', () => api.messages.sendAttachment(1, { url: 'https://x.test/a.png', file_name: s(256) }), 'file_name'],
    ['template 255', () => api.messages.sendTemplate(1, { template: s(256) }), 'template'],
    ['note body 4096', () => api.notes.create(1, { body: s(4097) }), 'body'],
    ['summary 2000', () => api.conversations.update(1, { summary: s(2001) }), 'summary'],
    ['snoozed_until future', () => api.conversations.snooze(1, '2020-01-01T00:00:00Z'), 'snoozed_until'],
    ['category only when closing', () => api.conversations.update(1, { status: 'open', category: 'x' } as never), 'category'],
    ['deal name 255', () => api.deals.create({ name: s(256) }), 'name'],
    ['deal amount >= 0', () => api.deals.create({ name: 'd', amount: -1 }), 'amount'],
    ['deal amount at most 9999999999999.99', () => api.deals.update(1, { amount: 1e300 }), 'amount'],
    ['message type required', () => api.messages.send(1, { text: 'hello' } as never), 'type'],
    ['no body beside a type', () => api.messages.send(1, { type: 'text', text: 'y', body: 'x' } as never), 'body'],
    ['no field of another kind', () => api.messages.sendText(1, 'hi', { caption: 'c' } as never), 'caption'],
    ['closed_lost_reason 255', () => api.deals.update(1, { closed_lost_reason: s(256) }), 'closed_lost_reason'],
    ['close_date format', () => api.deals.update(1, { close_date: '01/02/2026' }), 'close_date'],
    ['items min 1', () => api.orders.create({ contact_id: 1, items: [] }), 'items'],
    ['quantity >= 1', () => api.orders.create({ contact_id: 1, items: [{ product_id: 1, quantity: 0 }] }), 'items.0.quantity'],
    [
      'free-text line needs a price',
      () => api.orders.create({ contact_id: 1, items: [{ name: 'Gift wrap', quantity: 1 }] }),
      'items.0.unit_price',
    ],
    [
      'external_id 191',
      () => api.orders.create({ contact_id: 1, items: [{ product_id: 1, quantity: 1 }], external_id: s(192) }),
      'external_id',
    ],
    ['status not in order update', () => api.orders.update(1, { status: 'delivered' } as never), 'status'],
    ['order status', () => api.orders.setStatus(1, 'shipped' as never), 'status'],
    ['task title', () => api.tasks.create({ title: '', due_at: '2026-03-02T00:00:00Z' }), 'title'],
    ['lead name', () => api.leads.create({ contact_id: 1, name: '' }), 'name'],
  ])('%s', async (_name, fn, field) => {
    const err = await refused(fn);
    expect(err.field).toBe(field);
    expect(err.allowed.length).toBeGreaterThan(0);
    expect(err.message).toContain(field);
    expect(err.retryable).toBe(false);
  });

  it('accepts values exactly at the limits (nothing refused client-side)', async () => {
    const before = calls.length;
    await api.messages.sendText(1, s(4096), {}, { timeoutMs: 1000 }).catch(() => undefined);
    await api.messages
      .sendButtons(
        1,
        'pick',
        Array.from({ length: 10 }, (_, i) => `${i}${s(99)}`),
      )
      .catch(() => undefined);
    await api.contacts.create({ name: s(255), phone: s(32, '1') }).catch(() => undefined);
    expect(calls.length).toBeGreaterThan(before);
  });
});
