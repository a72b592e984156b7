import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, type Harness, type World } from '../../support/sandbox.js';

// Spec: Resources and their fields, General conventions (timestamps ISO 8601 with an offset; `date` fields YYYY-MM-DD).
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

const BAD_DATES = ['2025-13-45', '2025-02-29', '2031-04-31', 'Feb 1 2031', '2031-2-1', '2031-02-01T00:00:00Z'];
const BAD_TIMESTAMPS = ['Feb 1 2031', '2031-02-01', '2031-02-01T10:00:00', '2031-02-30T10:00:00Z', '2031-02-01T25:00:00Z', '1928374650'];

describe('dates are real YYYY-MM-DD calendar dates', () => {
  it.each(BAD_DATES)('refuses close_date %j on a deal (create and update)', async (close_date) => {
    const created = await h.api('POST', '/deals', { body: { name: 'Dated', close_date } });
    expect([created.status, Object.keys(created.body.errors ?? {})]).toEqual([422, ['close_date']]);
    const deal = (await h.api('POST', '/deals', { body: { name: 'Dated' } })).body.data;
    const patched = await h.api('PATCH', `/deals/${deal.id}`, { body: { close_date } });
    expect([patched.status, Object.keys(patched.body.errors ?? {})]).toEqual([422, ['close_date']]);
  });

  it('takes a leap day in a leap year', async () => {
    const r = await h.api('POST', '/deals', { body: { name: 'Leap', close_date: '2028-02-29' } });
    expect([r.status, r.body.data.close_date]).toEqual([201, '2028-02-29']);
  });
});

describe('timestamps are ISO 8601 with an offset', () => {
  it.each(BAD_TIMESTAMPS)('refuses due_at %j on a task (create and update)', async (due_at) => {
    const created = await h.api('POST', '/tasks', { body: { title: 'Timed', due_at } });
    expect([created.status, Object.keys(created.body.errors ?? {})]).toEqual([422, ['due_at']]);
    const task = (await h.api('POST', '/tasks', { body: { title: 'Timed', due_at: '2031-02-01T09:30:00Z' } })).body.data;
    const patched = await h.api('PATCH', `/tasks/${task.id}`, { body: { due_at } });
    expect([patched.status, Object.keys(patched.body.errors ?? {})]).toEqual([422, ['due_at']]);
  });

  it('takes Z, a ±hh:mm offset and a fraction, and answers in UTC', async () => {
    const r = await h.api('POST', '/tasks', { body: { title: 'Cairo', due_at: '2031-02-01T11:30:00.250+02:00' } });
    expect([r.status, r.body.data.due_at]).toEqual([201, '2031-02-01T09:30:00.250Z']);
  });

  it.each(BAD_TIMESTAMPS.filter((t) => t !== '2031-02-01'))('refuses snoozed_until %j', async (snoozed_until) => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'Snoozer' } })).body.data;
    const cv = (await h.api('POST', '/conversations', { body: { contact: c.id, channel_id: acme.channels[0]!.id } })).body.data;
    const r = await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'snoozed', snoozed_until } });
    expect([r.status, Object.keys(r.body.errors ?? {})]).toEqual([422, ['snoozed_until']]);
  });

  it.each([
    ['/contacts?created_after=', 'created_after'],
    ['/contacts?created_before=', 'created_before'],
    ['/contacts?updated_after=', 'updated_after'],
    ['/orders?since=', 'since'],
    ['/tasks?due_before=', 'due_before'],
  ])('query %s takes a date or a timestamp with an offset, nothing else', async (path, field) => {
    for (const good of ['2031-02-01', '2031-02-01T09:30:00Z', '2031-02-01T11:30:00+02:00']) {
      expect((await h.api('GET', `${path}${encodeURIComponent(good)}`)).status, good).toBe(200);
    }
    for (const bad of ['2025-13-45', 'Feb 1 2031', '2031-02-01T09:30:00', 'yesterday']) {
      const r = await h.api('GET', `${path}${encodeURIComponent(bad)}`);
      expect([bad, r.status, Object.keys(r.body.errors ?? {})]).toEqual([bad, 422, [field]]);
    }
  });
});
