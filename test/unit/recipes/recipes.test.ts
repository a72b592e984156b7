import { describe, expect, it } from 'vitest';
import { HandlerConfigError } from '../../../src/handler/define.js';
import {
  createEvent,
  createSandbox,
  MemoryStepStore,
  sandboxClient,
  testHandler,
  type TestHandlerResult,
} from '../../../src/testing/index.js';
import awayReply from '../../../handlers/away-reply.js';
import followUpTask from '../../../handlers/follow-up-task.js';
import leadWon from '../../../handlers/lead-won.js';
import mergeDuplicates from '../../../handlers/merge-duplicates.js';
import slaEscalation from '../../../handlers/sla-escalation.js';

/**
 * The shipped recipes, each run through switchyard/testing's testHandler as
 * the worker runs it, against an in-process sandbox: on its fixture, the calls
 * it makes and the state they leave; a retry; a settings variant.
 * (test/e2e/recipes.test.ts runs them through the receiver and worker over HTTP.)
 */
const writes = (run: TestHandlerResult) => run.calls.filter((c) => c.method !== 'GET');
const summary = (run: TestHandlerResult) => run.calls.map((c) => `${c.method} ${c.path} ${c.status}${c.replayed ? ' replayed' : ''}`);

describe('follow-up-task', () => {
  it('on its fixture: reads the contact, creates one call task for the assignee due FOLLOW_UP_DAYS (2) after the close', async () => {
    const run = await testHandler(followUpTask, 'conversation.closed');
    expect(run.outcome, run.reason).toBe('completed');
    expect(summary(run)).toEqual(['GET /contacts/35 200', 'POST /tasks 201']);
    expect(run.calls[1]?.body).toEqual({
      title: 'Follow up with Alice Adams',
      type: 'call',
      due_at: '2025-03-06T09:20:00.000Z',
      contact_id: 35,
      assignee_id: 21,
    });
    const tasks = (await sandboxClient(run.sandbox!).tasks.list({ contact_id: 35 }).firstPage()).data;
    expect(tasks.filter((t) => t.title === 'Follow up with Alice Adams')).toMatchObject([
      { type: 'call', due_at: '2025-03-06T09:20:00.000Z', assignee_id: 21 },
    ]);
  });

  it('a retry sends the same Idempotency-Key: the API replays it, no second task', async () => {
    const sandbox = createSandbox();
    const first = await testHandler(followUpTask, 'conversation.closed', { sandbox });
    const retry = await testHandler(followUpTask, 'conversation.closed', { sandbox, attempt: 2 });
    expect(summary(retry)).toEqual(['GET /contacts/35 200', 'POST /tasks 201 replayed']);
    expect(writes(retry)[0]?.idempotencyKey).toBe(writes(first)[0]?.idempotencyKey);
    expect(sandbox.state.log.list({ method: 'POST', path: '/tasks' }).filter((r) => !r.replay)).toHaveLength(1);
  });

  it("settings: FOLLOW_UP_DAYS=0.5 makes the task due 12 hours after the close; without an assignee the API picks the token's teammate", async () => {
    const run = await testHandler(followUpTask, createEvent('conversation.closed', { data: { assignee: null } }), {
      env: { FOLLOW_UP_DAYS: '0.5' },
    });
    expect(run.calls[1]?.body).toEqual({
      title: 'Follow up with Alice Adams',
      type: 'call',
      due_at: '2025-03-04T21:20:00.000Z',
      contact_id: 35,
    });
  });

  it('skips a blocked contact', async () => {
    const sandbox = createSandbox();
    for (const ws of sandbox.state.workspaces.values()) {
      const alice = ws.contacts.get(35);
      if (alice) alice.blocked = true;
    }
    const run = await testHandler(followUpTask, 'conversation.closed', { sandbox });
    expect(summary(run)).toEqual(['GET /contacts/35 200']);
    expect(run.logs.map((l) => l.msg)).toContain('contact is blocked; no follow-up task');
  });
});

describe('lead-won', () => {
  it('on its fixture: moves the contact to the won stage and labels it customer, each in a step', async () => {
    const run = await testHandler(leadWon, 'lead.won');
    expect(run.outcome, run.reason).toBe('completed');
    expect(summary(run)).toEqual(['PUT /contacts/36/lifecycle 200', 'POST /contacts/36/labels 200']);
    expect(run.calls.map((c) => c.body)).toEqual([{ stage: 'Customer' }, { labels: ['customer'] }]);
    expect(run.steps.map((s) => [s.name, s.reused])).toEqual([
      ['lifecycle', false],
      ['label', false],
    ]);
    const api = sandboxClient(run.sandbox!);
    const contact = await api.contacts.get(36);
    expect(contact.lifecycle_stage_id).toBe((run.steps[0]?.result as { lifecycle: { id: number } }).lifecycle.id);
    expect((await api.contacts.labels.list(36)).map((l) => l.name)).toEqual(['customer']);
  });

  it('a retry with the same step store makes no call at all: both steps come from the store', async () => {
    const sandbox = createSandbox();
    const steps = new MemoryStepStore();
    const first = await testHandler(leadWon, 'lead.won', { sandbox, steps });
    const retry = await testHandler(leadWon, 'lead.won', { sandbox, steps, attempt: 2 });
    expect(retry.outcome).toBe('completed');
    expect(retry.calls).toEqual([]);
    expect(retry.steps).toEqual(first.steps.map((s) => ({ ...s, reused: true })));
    expect(sandbox.state.log.list()).toHaveLength(2);
  });

  it('settings: another stage and label; a stage without outcome "won" is warned about', async () => {
    const run = await testHandler(leadWon, 'lead.won', { settings: { WON_STAGE: 'Qualified', LEAD_WON_LABEL: 'vip' } });
    expect(run.calls.map((c) => c.body)).toEqual([{ stage: 'Qualified' }, { labels: ['vip'] }]);
    expect(run.logs.find((l) => l.level === 'warn')).toMatchObject({
      msg: 'WON_STAGE is not a stage with outcome "won"',
      stage: 'Qualified',
    });
  });

  it('a stage the workspace lacks is a configuration error: dead-lettered at once, no label added', async () => {
    const run = await testHandler(leadWon, 'lead.won', { settings: { WON_STAGE: 'Platinum' } });
    expect(run.outcome).toBe('dead');
    expect(run.error).toBeInstanceOf(HandlerConfigError);
    expect(summary(run)).toEqual(['PUT /contacts/36/lifecycle 422']);
  });
});

describe('away-reply', () => {
  const hours = { BUSINESS_HOURS: 'Mon-Fri 10:00-17:00 Europe/Berlin', AWAY_MESSAGE: 'Back at ten' };

  it('is off without BUSINESS_HOURS, and quiet within business hours (the fixture: Tuesday 09:58 in Berlin)', async () => {
    expect((await testHandler(awayReply, 'message.received')).calls).toEqual([]);
    const open = await testHandler(awayReply, 'message.received', { settings: { BUSINESS_HOURS: 'Mon-Fri 09:00-17:00 Europe/Berlin' } });
    expect(open).toMatchObject({ outcome: 'completed', calls: [] });
  });

  it('outside hours: reads the thread and sends AWAY_MESSAGE once per closed period, also for a second message', async () => {
    const sandbox = createSandbox();
    const first = await testHandler(awayReply, 'message.received', { sandbox, settings: hours });
    expect(first.outcome, first.reason).toBe('completed');
    expect(summary(first)).toEqual(['GET /conversations/38/messages 200', 'POST /conversations/38/messages 201']);
    expect(writes(first)[0]?.body).toMatchObject({ text: 'Back at ten' });
    const thread = (await sandboxClient(sandbox).messages.list(38).firstPage()).data;
    expect(thread.filter((m) => m.body === 'Back at ten')).toMatchObject([{ direction: 'outbound' }]);

    const second = createEvent('message.received', { data: { id: 41, body: 'Anyone?', created_at: '2025-03-04T09:59:30+01:00' } });
    const again = await testHandler(awayReply, second, { sandbox, settings: hours });
    expect(summary(again)).toEqual(['GET /conversations/38/messages 200']);
  });

  it('never answers an outbound message', async () => {
    const outbound = createEvent('message.received', { data: { direction: 'outbound', sender_type: 'user', user_id: 20 } });
    expect((await testHandler(awayReply, outbound, { settings: hours })).calls).toEqual([]);
  });
});

describe('merge-duplicates', () => {
  it('is off by default; on, its fixture (no older contact with that email or phone) only looks', async () => {
    expect((await testHandler(mergeDuplicates, 'contact.created')).calls).toEqual([]);
    const run = await testHandler(mergeDuplicates, 'contact.created', { settings: { MERGE_DUPLICATES: true } });
    expect(run.outcome, run.reason).toBe('completed');
    expect(run.calls.map((c) => `${c.op} ${c.status}`)).toEqual(['contacts.list 200', 'contacts.list 200']);
  });

  it('merges a new contact into the older one with its email; the new one is gone', async () => {
    const sandbox = createSandbox();
    const api = sandboxClient(sandbox);
    const dup = await api.contacts.create({ name: 'Alice Again', email: 'alice@example.com' });
    const run = await testHandler(mergeDuplicates, createEvent('contact.created', { data: dup }), {
      sandbox,
      env: { MERGE_DUPLICATES: 'yes' },
    });
    expect(run.outcome, run.reason).toBe('completed');
    expect(writes(run).map((c) => [c.path, c.status, c.body])).toEqual([['/contacts/merge', 200, { survivor: 35, loser: dup.id }]]);
    await expect(api.contacts.get(dup.id)).rejects.toMatchObject({ status: 404 });
    expect((await api.contacts.get(35)).email).toBe('alice@example.com');
  });
});

describe('sla-escalation', () => {
  // Monday 3 March 2025, 16:30 in Berlin: 30 business minutes left that day, so a 60-minute SLA is due Tuesday 09:30 (08:30 UTC).
  const at = new Date('2025-03-03T15:30:00Z');
  const settings = { SLA_ASSIGNEE: 21, SLA_MINUTES: 60, BUSINESS_HOURS: 'Mon-Fri 09:00-17:00 Europe/Berlin' };
  const message = createEvent('message.received');
  const reply = createEvent('message.sent');
  const note = createEvent('message.sent', { data: { type: 'note', direction: null } });
  const closed = createEvent('conversation.closed');

  it('off without SLA_ASSIGNEE: no wait, no call', async () => {
    const run = await testHandler(slaEscalation, message, { now: at });
    expect(run.outcome, run.reason).toBe('completed');
    expect(run.waits).toEqual([]);
    expect(run.calls).toEqual([]);
  });

  it('no reply: at the business-hours deadline, assigns the conversation to SLA_ASSIGNEE and adds a note mentioning them', async () => {
    const run = await testHandler(slaEscalation, message, { now: at, settings });
    expect(run.outcome, run.reason).toBe('completed');
    expect(run.waits).toEqual([
      { name: 'agent-reply', kind: 'wait', startedAt: '2025-03-03T15:30:00.000Z', due: '2025-03-04T08:30:00.000Z', outcome: 'timed_out' },
    ]);
    expect(summary(run)).toEqual(['GET /conversations/38 200', 'PATCH /conversations/38 200', 'POST /conversations/38/notes 201']);
    expect(writes(run).map((c) => c.body)).toEqual([
      { assignee: { type: 'user', id: 21 } },
      { body: "No reply within 60 business minutes of the customer's message: escalated.", mentions: [21] },
    ]);
    const api = sandboxClient(run.sandbox!);
    expect((await api.conversations.get(38)).assignee).toMatchObject({ type: 'user', id: 21 });
    const thread = (await api.messages.list(38, { per_page: 50 }).firstPage()).data;
    expect(thread.find((m) => m.type === 'note' && m.body.startsWith('No reply within'))?.created_at).toMatch(
      /^2025-03-04T(08:30:00(\.000)?Z|09:30:00(\.000)?\+01:00)$/,
    );
  });

  it('a reply in time (even one that came before the run reached its wait) ends it: nothing written', async () => {
    for (const events of [[{ event: reply, after: '10m' }], [reply]]) {
      const run = await testHandler(slaEscalation, message, { now: at, settings, events });
      expect(run.outcome, run.reason).toBe('completed');
      expect(run.waits[0]).toMatchObject({ outcome: 'matched', event: { name: 'message.sent', data: { id: 40 } } });
      expect(run.calls).toEqual([]);
    }
  });

  it('a reply after the deadline, or in another conversation, does not count; an internal note does (someone is on it)', async () => {
    const late = await testHandler(slaEscalation, message, {
      now: at,
      settings,
      events: [createEvent('message.sent', { data: { conversation_id: 99 } }), { event: reply, at: '2025-03-04T08:31:00Z' }],
    });
    expect((await testHandler(slaEscalation, message, { now: at, settings, events: [{ event: note, after: '5m' }] })).calls).toEqual([]);
    expect(late.waits[0]?.outcome).toBe('timed_out');
    expect(writes(late).map((c) => `${c.method} ${c.path}`)).toEqual(['PATCH /conversations/38', 'POST /conversations/38/notes']);
  });

  it('closing the conversation while it waits cancels the run: nothing written', async () => {
    const run = await testHandler(slaEscalation, message, { now: at, settings, events: [{ event: closed, at: '2025-03-04T08:00:00Z' }] });
    expect(run.outcome).toBe('cancelled');
    expect(run.waits).toMatchObject([{ name: 'agent-reply', outcome: 'cancelled', event: { name: 'conversation.closed' } }]);
    expect(run.calls).toEqual([]);
  });

  it('a woken or retried run reuses its steps: no second assignment or note', async () => {
    const sandbox = createSandbox();
    const steps = new MemoryStepStore();
    await testHandler(slaEscalation, message, { now: at, settings, sandbox, steps });
    const again = await testHandler(slaEscalation, message, { now: at, settings, sandbox, steps, attempt: 2 });
    expect(again.calls).toEqual([]);
    expect(again.steps.map((s) => [s.name, s.reused])).toEqual([
      ['conversation', true],
      ['assign', true],
      ['note', true],
    ]);
    expect(sandbox.state.log.list({ method: 'POST', path: '/conversations/38/notes' })).toHaveLength(1);
  });

  it("already escalated (an earlier message's run), outbound messages and notes: nothing written", async () => {
    const sandbox = createSandbox();
    await testHandler(slaEscalation, message, { now: at, settings, sandbox });
    const second = await testHandler(slaEscalation, createEvent('message.received', { id: 'evt_second' }), { now: at, settings, sandbox });
    expect(summary(second)).toEqual(['GET /conversations/38 200']);
    for (const own of [
      createEvent('message.received', { data: { direction: 'outbound' } }),
      createEvent('message.received', { data: { type: 'note' } }),
    ]) {
      expect((await testHandler(slaEscalation, own, { now: at, settings })).waits).toEqual([]);
    }
  });
});
