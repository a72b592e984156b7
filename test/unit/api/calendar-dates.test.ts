import { describe, expect, it } from 'vitest';
import { RequestValidationError, createApiClient, type ApiClient } from '../../../src/api/index.js';
import { contact, fakeFetch, settle } from '../../support/fake-fetch.js';

// Dates and timestamps the client sends are checked part by part before sending:
// Date.parse rolls 2026-02-30 over to 2 March, which the service (and the sandbox) refuse.
const { fetch, calls } = fakeFetch(() => ({ status: 200, body: { data: [contact()], meta: { next_cursor: null, per_page: 50 } } }));
const api: ApiClient = createApiClient({
  baseUrl: 'http://localhost:1/api/v1',
  token: 't',
  fetch,
  clock: () => Date.parse('2026-03-01T00:00:00Z'),
  retry: { maxAttempts: 1 },
});

/** Runs a call (or the first page of a listing): what it threw, and how many requests it sent. */
const run = (fn: () => unknown) => settle(fn, calls);

describe('impossible calendar dates are refused before sending', () => {
  it.each([
    [
      'close_date 2026-02-30',
      () => api.deals.update(1, { close_date: '2026-02-30' }),
      'close_date',
      '2026-02-30',
      'February 2026 has 28 days',
    ],
    [
      'close_date 2025-02-29 (no leap year)',
      () => api.deals.create({ name: 'd', close_date: '2025-02-29' }),
      'close_date',
      '2025-02-29',
      'February 2025 has 28 days',
    ],
    [
      'close_date 1900-02-29 (no leap year)',
      () => api.deals.update(1, { close_date: '1900-02-29' }),
      'close_date',
      '1900-02-29',
      'February 1900 has 28 days',
    ],
    ['close_date month 13', () => api.deals.update(1, { close_date: '2025-13-01' }), 'close_date', '2025-13-01', 'month 13'],
    ['close_date April 31', () => api.deals.update(1, { close_date: '2026-04-31' }), 'close_date', '2026-04-31', 'April 2026 has 30 days'],
    [
      'due_at on 30 February',
      () => api.tasks.create({ title: 't', due_at: '2026-02-30T10:00:00Z' }),
      'due_at',
      '2026-02-30T10:00:00Z',
      'February 2026 has 28 days',
    ],
    ['due_at hour 25', () => api.tasks.update(1, { due_at: '2026-03-02T25:00:00Z' }), 'due_at', '2026-03-02T25:00:00Z', 'hour 25'],
    ['due_at without an offset', () => api.tasks.update(1, { due_at: '2026-03-02T10:00:00' }), 'due_at', '2026-03-02T10:00:00', 'offset'],
    ['due_at free text', () => api.tasks.update(1, { due_at: 'Feb 1 2031' }), 'due_at', 'Feb 1 2031', 'ISO 8601'],
    ['due_at an invalid Date', () => api.tasks.update(1, { due_at: new Date(NaN) }), 'due_at', 'Invalid Date', 'ISO 8601'],
    [
      'snoozed_until on 31 April',
      () => api.conversations.snooze(1, '2031-04-31T09:00:00Z'),
      'snoozed_until',
      '2031-04-31T09:00:00Z',
      'April 2031 has 30 days',
    ],
    [
      'created_after on 30 February',
      () => api.contacts.list({ created_after: '2026-02-30' }),
      'created_after',
      '2026-02-30',
      'February 2026 has 28 days',
    ],
    [
      'updated_after on 30 February',
      () => api.contacts.list({ updated_after: '2026-02-30T00:00:00Z' }),
      'updated_after',
      '2026-02-30T00:00:00Z',
      'February 2026 has 28 days',
    ],
    ['since 2025-02-29', () => api.orders.list({ since: '2025-02-29' }), 'since', '2025-02-29', 'February 2025 has 28 days'],
    ['due_before month 0', () => api.tasks.list({ due_before: '2026-00-10' }), 'due_before', '2026-00-10', 'month 0'],
  ])('%s', async (_name, fn, field, value, why) => {
    const { err, sent } = await run(fn);
    expect(sent).toBe(0);
    expect(err).toBeInstanceOf(RequestValidationError);
    const e = err as RequestValidationError;
    expect(e.field).toBe(field);
    // Says what was wrong (the value and why) and what was expected.
    expect(e.message).toContain(value);
    expect(e.message).toContain(why);
    expect(e.allowed).toMatch(/YYYY-MM-DD/);
  });

  it.each([
    ['a leap day', () => api.deals.update(1, { close_date: '2028-02-29' })],
    ['a timestamp with an offset', () => api.tasks.update(1, { due_at: '2031-02-01T09:30:00+02:00' })],
    ['a timestamp with a fraction and Z', () => api.tasks.update(1, { due_at: '2031-12-31T23:59:59.999Z' })],
    ['a Date', () => api.tasks.update(1, { due_at: new Date('2031-02-01T09:30:00Z') })],
    [
      'a bare date as a query bound',
      () => api.contacts.list({ created_after: '2026-02-28', created_before: new Date('2026-03-01T00:00:00Z') }),
    ],
  ])('sends %s', async (_name, fn) => {
    const { err, sent } = await run(fn);
    expect(err).not.toBeInstanceOf(RequestValidationError);
    expect(sent).toBe(1);
  });
});
