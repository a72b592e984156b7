import { Server } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createApiClient } from '../../../src/api/client.js';
import { defineHandler, HandlerConfigError, HandlerSettingsError, HandlerTimeoutError } from '../../../src/handler/define.js';
import { createLogger } from '../../../src/log/logger.js';
import { createHandlerProcessor } from '../../../src/worker/processor.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import {
  createEvent,
  createSandbox,
  DeliveryError,
  loadFixture,
  MemoryStepStore,
  readDelivery,
  sandboxClient,
  testHandler,
} from '../../../src/testing/index.js';
import { IN_PROCESS_BASE_URL, sandboxFetch } from '../../../src/testing/sandbox-api.js';
import leadWon from '../../../handlers/lead-won.js';
import { match } from '../../support/match.js';

const FIXTURES = new URL('../../../fixtures/', import.meta.url);

/** A handler that writes twice, the second write inside a step, and logs personal data. */
const noteTwice = defineHandler({
  id: 'note-twice',
  on: ['conversation.closed'],
  settings: z.object({
    NOTE_TEXT: z.string().default('closed'),
    NOTES: z.coerce.number().int().min(1).default(1),
    LOUD: z.stringbool().default(false),
  }),
  async handle(event, ctx) {
    const id = event.data.id;
    for (let i = 0; i < ctx.settings.NOTES; i++) await ctx.api.notes.create(id, { body: ctx.settings.NOTE_TEXT });
    const task = await ctx.step(
      'task',
      async () =>
        (await ctx.api.tasks.create({ title: 'Check', type: 'call', due_at: '2030-01-01T00:00:00Z', contact_id: event.data.contact_id }))
          .id,
    );
    ctx.log.info(
      { task, email: 'alice@example.com', attempt: ctx.delivery.attempt, loud: ctx.settings.LOUD },
      'noted; wrote to alice@example.com',
    );
  },
});

const throws = (error: unknown) =>
  defineHandler({
    id: 'thrower',
    on: ['lead.won'],
    handle: () => {
      throw error;
    },
  });

describe('testHandler: one handler, run as the worker runs it', () => {
  it('runs a handler object made by an older copy of the package (no workflow member) as one without workflow options', async () => {
    const { workflow, ...older } = noteTwice;
    expect(workflow).toBeDefined();
    const run = await testHandler(older as typeof noteTwice, 'conversation.closed');
    const current = await testHandler(noteTwice, 'conversation.closed');
    expect([run.outcome, run.calls.map((c) => c.op)]).toEqual(['completed', current.calls.map((c) => c.op)]);
  });

  it('runs on an event name (its fixture) against a fresh seeded sandbox and returns outcome, calls, steps and logs', async () => {
    const run = await testHandler(noteTwice, 'conversation.closed');
    expect(run).toMatchObject({ outcome: 'completed', error: undefined, reason: undefined });
    expect(run.delivery).toEqual({
      key: 'evt_01JNK8ZC0A7M3Q5T1V9X2B4D6F',
      receivedAt: '2025-03-04T10:20:01.774Z',
      attempt: 1,
      source: 'webhook',
    });
    expect(run.calls.map(({ op, method, path, status, body }) => ({ op, method, path, status, body }))).toEqual([
      { op: 'notes.create', method: 'POST', path: '/conversations/38/notes', status: 201, body: { body: 'closed' } },
      {
        op: 'tasks.create',
        method: 'POST',
        path: '/tasks',
        status: 201,
        body: { title: 'Check', type: 'call', due_at: '2030-01-01T00:00:00Z', contact_id: 35 },
      },
    ]);
    for (const c of run.calls) expect(c).toMatchObject({ idempotencyKey: match.stringMatching(/^sy_/), attempt: 1, replayed: false });
    // The sandbox it ran against, with its request log: the same requests, with the same keys.
    expect(run.sandbox?.state.log.list().map((r) => [r.method, r.path, r.idempotency_key])).toEqual(
      run.calls.map((c) => [c.method, c.path, c.idempotencyKey]),
    );
    // The step's stored result is the id of the task the sandbox now holds.
    const tasks = await sandboxClient(run.sandbox!).tasks.list({ contact_id: 35 }).firstPage();
    const taskId = tasks.data.find((t) => t.title === 'Check')?.id;
    expect(run.steps).toEqual([{ name: 'task', result: taskId, reused: false }]);
    expect(typeof taskId).toBe('number');
    // Log lines as objects, redacted as in production, bound as the worker binds them.
    const noted = run.logs.find((l) => l.msg?.startsWith('noted'));
    expect(noted).toMatchObject({
      level: 'info',
      handler: 'note-twice',
      event: 'conversation.closed',
      delivery: run.delivery.key,
      attempt: 1,
      task: taskId,
      email: '[redacted]',
      loud: false,
    });
    expect(noted?.msg).not.toContain('alice@example.com');
    expect(run.logs.at(-1)).toMatchObject({ msg: 'handler done', outcome: 'completed' });
  });

  it("gives the handler a ctx with every member as its own (listed or spread like the worker's), the workflow ones included", async () => {
    let keys: string[] = [];
    const lister = defineHandler({
      id: 'lister',
      on: ['lead.won'],
      handle: (_e, ctx) => {
        keys = Object.keys({ ...ctx }).sort();
      },
    });
    expect((await testHandler(lister, 'lead.won')).outcome).toBe('completed');
    expect(keys).toEqual([
      'api',
      'debounced',
      'delivery',
      'log',
      'settings',
      'signal',
      'sleep',
      'sleepUntil',
      'state',
      'step',
      'waitForEvent',
      'workspace',
    ]);
  });

  it("sends exactly the Idempotency-Keys the worker's job processor sends for the same delivery", async () => {
    const run = await testHandler(noteTwice, 'conversation.closed', { settings: { NOTES: 2 } });
    const sandbox = createSandbox();
    const process = createHandlerProcessor({
      set: new HandlerSet(handlerSnapshot([noteTwice], undefined, { NOTES: '2' })),
      api: (keys) =>
        createApiClient({ baseUrl: IN_PROCESS_BASE_URL, token: 'sbx_full_acme', idempotencyKey: keys, fetch: sandboxFetch(sandbox) }),
      steps: new MemoryStepStore(),
      log: createLogger({ level: 'silent', destination: { write: () => undefined } }),
    });
    const event = run.event;
    const decision = await process({
      id: 'j1',
      attempts: 1,
      data: { key: run.delivery.key, handlerId: noteTwice.id, receivedAt: run.delivery.receivedAt, event },
      timestamp: Date.now(),
      attemptsMade: 0,
    });
    expect(decision.kind).toBe('completed');
    const workerKeys = sandbox.state.log.list().map((r) => r.idempotency_key);
    expect(workerKeys).toHaveLength(3);
    expect(new Set(workerKeys).size).toBe(3);
    expect(run.calls.map((c) => c.idempotencyKey)).toEqual(workerKeys);
  });

  it('a shared sandbox keeps state across calls; a shared step store makes a retry skip done steps and replay the rest', async () => {
    const sandbox = createSandbox();
    const steps = new MemoryStepStore();
    const first = await testHandler(noteTwice, 'conversation.closed', { sandbox, steps });
    const retry = await testHandler(noteTwice, 'conversation.closed', { sandbox, steps, attempt: 2 });
    expect(retry.outcome).toBe('completed');
    // The note (outside any step) is sent again with the same key, and the API replays it; the task step does not run.
    expect(retry.calls).toEqual([{ ...first.calls[0], replayed: true }]);
    expect(retry.steps).toEqual([{ ...first.steps[0], reused: true }]);
    expect(retry.logs.find((l) => l.msg?.startsWith('noted'))).toMatchObject({ attempt: 2, task: first.steps[0]?.result });
    expect(sandbox.state.log.list({ method: 'POST', path: '/tasks' })).toHaveLength(1);
    expect(sandbox.state.log.list({ method: 'POST', path: '/conversations/38/notes' }).map((r) => r.replay)).toEqual([false, true]);
    // A fresh step store per call (the default): the step runs again, and its same key is replayed by the API.
    const again = await testHandler(noteTwice, 'conversation.closed', { sandbox });
    expect(again.calls.map((c) => c.replayed)).toEqual([true, true]);
  });

  it('reports a failing handler as the worker would decide, without throwing', async () => {
    const retry = await testHandler(throws(new Error('flaky')), 'lead.won');
    expect(retry).toMatchObject({ outcome: 'retry', reason: 'Error: flaky', calls: [] });
    expect(retry.error).toBeInstanceOf(Error);
    expect(retry.logs.at(-1)).toMatchObject({ level: 'warn', msg: 'handler failed', outcome: 'retry' });
    const dead = await testHandler(leadWon, 'lead.won', { settings: { WON_STAGE: 'Platinum' } });
    expect(dead).toMatchObject({
      outcome: 'dead',
      reason: match.stringMatching(/^HandlerConfigError: lifecycle stage "Platinum" does not exist/),
    });
    expect(dead.error).toBeInstanceOf(HandlerConfigError);
    expect(dead.calls.map((c) => [c.path, c.status])).toEqual([['/contacts/36/lifecycle', 422]]);
    const paused = await testHandler(leadWon, 'lead.won', { token: 'sbx_expired_acme' });
    expect(paused).toMatchObject({ outcome: 'pause', reason: match.stringContaining('token_expired') });
    const sandbox = createSandbox();
    await sandbox.app.request('/_sandbox/quota', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"limit":0}' });
    expect(await testHandler(leadWon, 'lead.won', { sandbox })).toMatchObject({
      outcome: 'delay',
      reason: match.stringMatching(/quota exhausted/),
    });
    const noApi = await testHandler(defineHandler({ id: 'no-api', on: ['lead.won'], handle: () => undefined }), 'lead.won');
    expect(noApi.outcome).toBe('completed');
  });

  it("honours the handler's timeout as the worker does: retry with HandlerTimeoutError, ctx.signal aborted", async () => {
    let aborted: unknown;
    const slow = defineHandler({
      id: 'slow',
      on: ['lead.won'],
      timeout: 50,
      handle: (_e, ctx) =>
        new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => {
            aborted = ctx.signal.reason;
            resolve();
          }),
        ),
    });
    const started = performance.now();
    const run = await testHandler(slow, 'lead.won');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(run.outcome).toBe('retry');
    expect(run.error).toBeInstanceOf(HandlerTimeoutError);
    expect(aborted).toBe(run.error);
  });

  it("takes settings as values or as the environment would give them, checked by the handler's schema", async () => {
    const given = await testHandler(noteTwice, 'conversation.closed', { settings: { NOTE_TEXT: 'bye', LOUD: true } });
    expect(given.calls[0]?.body).toEqual({ body: 'bye' });
    expect(given.logs.find((l) => l.msg?.startsWith('noted'))).toMatchObject({ loud: true });
    const fromEnv = await testHandler(noteTwice, 'conversation.closed', {
      env: { NOTES: '2', LOUD: 'yes', NOTE_TEXT: ' ' },
      settings: { NOTE_TEXT: 'x' },
    });
    expect(fromEnv.calls.map((c) => c.body)).toEqual([{ body: 'x' }, { body: 'x' }, expect.anything()]);
    await expect(testHandler(noteTwice, 'conversation.closed', { settings: { NOTES: 0 } })).rejects.toThrow(HandlerSettingsError);
    await expect(testHandler(noteTwice, 'conversation.closed', { env: { NOTES: 'many' } })).rejects.toThrow(/NOTES is invalid/);
    await expect(testHandler(noteTwice, 'conversation.closed', { settings: { NOTEZ: 'x' } as never })).rejects.toThrow(
      new TypeError('testHandler: handler "note-twice" has no setting "NOTEZ" (expected one of NOTE_TEXT, NOTES, LOUD)'),
    );
  });

  it('takes an event, a delivery or an event name; refuses a bad input naming what was expected', async () => {
    const fromEvent = await testHandler(leadWon, createEvent('lead.won', { data: { contact_id: 35 } }), {
      now: new Date('2026-01-02T03:04:05Z'),
    });
    expect(fromEvent.calls.map((c) => c.path)).toEqual(['/contacts/35/lifecycle', '/contacts/35/labels']);
    expect(fromEvent.delivery).toMatchObject({ key: fromEvent.event.id, receivedAt: '2026-01-02T03:04:05.000Z' });
    expect(fromEvent.sandbox?.state.now()).toBe(Date.parse('2026-01-02T03:04:05Z'));
    const fromDelivery = await testHandler(leadWon, await readDelivery(new URL('lead.won.json', FIXTURES).pathname));
    expect(fromDelivery.calls.map((c) => c.idempotencyKey)).toEqual(
      (await testHandler(leadWon, await loadFixture('lead.won'))).calls.map((c) => c.idempotencyKey),
    );

    await expect(testHandler(leadWon, 'lead.wonn' as never)).rejects.toThrow(
      new DeliveryError('no fixture for unknown event "lead.wonn"; did you mean "lead.won"? (expected one of EVENT_NAMES)'),
    );
    await expect(testHandler(leadWon, (await loadFixture('lead.lost')) as never)).rejects.toThrow(
      /is a "lead.lost" event; handler "lead-won" subscribes to lead.won/,
    );
    const invalid = { ...createEvent('lead.won'), data: { id: 48, contact_id: 'x', name: 'n' } };
    await expect(testHandler(leadWon, invalid as never)).rejects.toThrow(
      /the "lead.won" event: not a valid event \(invalid_data\).*data\.contact_id: .*expected number/,
    );
    await expect(testHandler(leadWon, 42 as never)).rejects.toThrow(
      /expected an event \(createEvent, toEvent\), a Delivery \(loadFixture, readDelivery\) or an event name/,
    );
    await expect(testHandler({ id: 'x', on: ['lead.won'], handle: () => undefined } as never, 'lead.won')).rejects.toThrow(
      /a handler made by defineHandler/,
    );
    await expect(testHandler(leadWon, 'lead.won', { attempt: 0 })).rejects.toThrow(/attempt must be a positive integer/);
  });

  it('ctx.delivery.source: webhook by default, poll for a derived event, reconcile when asked; anything else is refused', async () => {
    const seen: string[] = [];
    const sourced = defineHandler({
      id: 'sourced',
      on: ['lead.won', 'order.created'],
      handle: (_event, ctx) => {
        seen.push(ctx.delivery.source);
      },
    });
    expect((await testHandler(sourced, 'lead.won')).delivery.source).toBe('webhook');
    expect((await testHandler(sourced, 'order.created')).delivery.source).toBe('poll');
    const reconciled = await testHandler(sourced, 'lead.won', { source: 'reconcile' });
    expect(reconciled.delivery).toMatchObject({ source: 'reconcile', key: `rc:lead.won:${reconciled.event.data.id}` });
    expect(seen).toEqual(['webhook', 'poll', 'reconcile']);
    await expect(testHandler(sourced, 'lead.won', { source: 'schedule' as never })).rejects.toThrow(
      'testHandler: source must be one of webhook, reconcile, poll, got "schedule"',
    );
    await expect(testHandler(sourced, 'order.created', { source: 'reconcile' })).rejects.toThrow(
      'testHandler: reconcile never synthesizes order.created (a derived event: the poller makes it)',
    );
    await expect(testHandler(sourced, 'lead.won', { source: 'poll' })).rejects.toThrow(
      /source "poll" is for the derived events .*, not lead.won/,
    );
  });

  it('opens no port and leaves no handle behind in the in-process mode', async () => {
    const listen = vi.spyOn(Server.prototype, 'listen');
    const handles = () => (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles().length;
    const before = handles();
    try {
      for (let i = 0; i < 3; i++) expect((await testHandler(noteTwice, 'conversation.closed')).outcome).toBe('completed');
      expect(listen).not.toHaveBeenCalled();
      expect(handles()).toBeLessThanOrEqual(before);
    } finally {
      listen.mockRestore();
    }
  });

  it('calls a given API over HTTP instead (`api: { url, token }`): here a sandbox listening on 127.0.0.1:0', async () => {
    const sandbox = createSandbox({ token: 'tok_http' });
    const server = await sandbox.listen(0, '127.0.0.1');
    try {
      const run = await testHandler(leadWon, 'lead.won', { api: { url: server.baseUrl, token: 'tok_http' } });
      expect(run.outcome).toBe('completed');
      expect(run.sandbox).toBeUndefined();
      expect(sandbox.state.log.list().map((r) => [r.method, r.path, r.status, r.idempotency_key, r.token?.label])).toEqual(
        run.calls.map((c) => [c.method, c.path, c.status, c.idempotencyKey, 'full']),
      );
      // Bob (36) is now on the stage Carol (37) is seeded on: Customer.
      const client = sandboxClient(sandbox);
      expect((await client.contacts.get(36)).lifecycle_stage_id).toBe((await client.contacts.get(37)).lifecycle_stage_id);
      await expect(testHandler(leadWon, 'lead.won', { api: { url: server.baseUrl, token: 'tok_http' }, sandbox })).rejects.toThrow(
        /either api or sandbox/,
      );
    } finally {
      await server.close();
    }
  });
});
