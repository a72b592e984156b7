import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiClient } from '../../../src/api/client.js';
import { defineHandler, defineSchedule, HandlerSettingsError, UnrecoverableError } from '../../../src/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { createScheduleProcessor } from '../../../src/sources/schedule/processor.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import { createSandbox, MemoryStepStore, sandboxClient, testSchedule } from '../../../src/testing/index.js';
import { IN_PROCESS_BASE_URL, sandboxFetch } from '../../../src/testing/sandbox-api.js';
import { match } from '../../support/match.js';

const TICK = '2025-03-03T08:00:00.000Z';

/** Reads the open tasks due within a day of the tick, writes a note in a step, then does what FAIL says. */
const digest = defineSchedule({
  id: 'digest',
  every: '1h',
  retry: { attempts: 3 },
  settings: z.object({
    NOTE_CONVERSATION: z.coerce.number().int().positive().default(38),
    FAIL: z.enum(['no', 'retry', 'dead']).default('no'),
  }),
  async handle(ctx) {
    const due = await ctx.api.tasks.list({ status: 'open', due_before: new Date(Date.parse(ctx.tick) + 86_400_000) }).toArray();
    const note = await ctx.step(
      'note',
      async () => (await ctx.api.notes.create(ctx.settings.NOTE_CONVERSATION, { body: `${due.length} due` })).id,
    );
    ctx.log.info({ note, tick: ctx.tick, source: ctx.delivery.source, email: 'alice@example.com' }, 'digest written for alice@example.com');
    if (ctx.settings.FAIL === 'retry') throw new Error('transient');
    if (ctx.settings.FAIL === 'dead') throw new UnrecoverableError('stop');
  },
});

describe('testSchedule: one schedule run for one tick, as the worker runs it', () => {
  it('runs at the tick against a fresh seeded sandbox whose clock stands there; returns outcome, calls, steps and logs', async () => {
    const run = await testSchedule(digest, { at: TICK });
    expect(run).toMatchObject({ outcome: 'completed', error: undefined, reason: undefined, tick: TICK });
    expect(run.delivery).toEqual({ key: `schedule:digest:${TICK}`, receivedAt: TICK, attempt: 1, source: 'schedule' });
    expect(run.calls.map(({ op, method, path, status, body }) => ({ op, method, path, status, body }))).toEqual([
      { op: 'tasks.list', method: 'GET', path: '/tasks', status: 200, body: undefined },
      // The seed's two open tasks are due 2 h and 1 day after the sandbox's start: at the tick.
      { op: 'notes.create', method: 'POST', path: '/conversations/38/notes', status: 201, body: { body: '2 due' } },
    ]);
    expect(run.calls[1]?.idempotencyKey).toMatch(/^sy_/);
    expect(run.sandbox?.state.log.list().map((r) => [r.method, r.path, r.idempotency_key ?? undefined])).toEqual(
      run.calls.map((c) => [c.method, c.path, c.idempotencyKey]),
    );
    // The step's stored result is the id of the note the sandbox now holds.
    const messages = await sandboxClient(run.sandbox!).messages.list(38).toArray();
    expect(run.steps).toEqual([{ name: 'note', result: messages.find((m) => m.body === '2 due')?.id, reused: false }]);
    expect(run.steps[0]?.result).toEqual(match.any(Number));
    const line = run.logs.find((l) => l.msg?.startsWith('digest written'));
    expect(line).toMatchObject({
      level: 'info',
      handler: 'digest',
      event: 'schedule',
      delivery: run.delivery.key,
      attempt: 1,
      tick: TICK,
      source: 'schedule',
      email: '[redacted]',
    });
    expect(line?.msg).not.toContain('alice@example.com');
    expect(run.logs.at(-1)).toMatchObject({ msg: 'handler done', outcome: 'completed' });
  });

  it("sends exactly the Idempotency-Keys the worker's schedule processor sends for the same tick", async () => {
    const run = await testSchedule(digest, { at: new Date(TICK) });
    const sandbox = createSandbox({ clock: () => Date.parse(TICK) });
    const process = createScheduleProcessor({
      set: new HandlerSet(handlerSnapshot([], undefined, {}, [digest])),
      api: (keys) =>
        createApiClient({ baseUrl: IN_PROCESS_BASE_URL, token: 'sbx_full_acme', idempotencyKey: keys, fetch: sandboxFetch(sandbox) }),
      steps: new MemoryStepStore(),
      log: createLogger({ level: 'silent', destination: { write: () => undefined } }),
    });
    const decision = await process({
      id: `repeat:digest:${Date.parse(TICK)}`,
      data: { scheduleId: 'digest' },
      timestamp: Date.parse(TICK),
      delay: 0,
      attemptsMade: 0,
    });
    expect(decision.kind).toBe('completed');
    const workerKeys = sandbox.state.log.list().map((r) => r.idempotency_key ?? undefined);
    expect(run.calls.map((c) => c.idempotencyKey)).toEqual(workerKeys);
    // Another tick is another run: other keys.
    const next = await testSchedule(digest, { at: Date.parse(TICK) + 3_600_000 });
    expect(next.calls[1]?.idempotencyKey).not.toBe(run.calls[1]?.idempotencyKey);
  });

  it("takes settings (checked by the schedule's schema) and env; refuses a setting it has not", async () => {
    const given = await testSchedule(digest, { at: TICK, settings: { NOTE_CONVERSATION: 39 } });
    expect(given.calls[1]?.path).toBe('/conversations/39/notes');
    const fromEnv = await testSchedule(digest, { at: TICK, env: { NOTE_CONVERSATION: '39' } });
    expect(fromEnv.calls[1]?.path).toBe('/conversations/39/notes');
    await expect(testSchedule(digest, { settings: { NOTE_CONVERSATION: -1 } })).rejects.toThrow(HandlerSettingsError);
    await expect(testSchedule(digest, { settings: { NOTES: 1 } as never })).rejects.toThrow(
      'testSchedule: schedule "digest" has no setting "NOTES" (expected one of NOTE_CONVERSATION, FAIL)',
    );
  });

  it('a failing run is an outcome: retry, dead on the last attempt or for good; an unusable token is retried, as the worker does for schedules', async () => {
    const retry = await testSchedule(digest, { at: TICK, settings: { FAIL: 'retry' } });
    expect(retry).toMatchObject({ outcome: 'retry', reason: 'Error: transient' });
    expect((retry.error as Error).message).toBe('transient');
    const last = await testSchedule(digest, { at: TICK, settings: { FAIL: 'retry' }, attempt: 3 });
    expect(last).toMatchObject({ outcome: 'dead', reason: 'Error: transient (attempt 3 of 3: no retry left)' });
    expect((await testSchedule(digest, { at: TICK, settings: { FAIL: 'dead' } })).outcome).toBe('dead');
    const expired = await testSchedule(digest, { at: TICK, token: 'sbx_expired_acme' });
    expect(expired.outcome).toBe('retry');
    expect(expired.reason).toMatch(/token/i);
  });

  it('a shared step store and sandbox make a retry of the same tick skip the done step', async () => {
    const sandbox = createSandbox({ clock: () => Date.parse(TICK) });
    const steps = new MemoryStepStore();
    const first = await testSchedule(digest, { at: TICK, sandbox, steps, settings: { FAIL: 'retry' } });
    expect(first.outcome).toBe('retry');
    const again = await testSchedule(digest, { at: TICK, sandbox, steps, attempt: 2 });
    expect(again.outcome).toBe('completed');
    expect(again.delivery.attempt).toBe(2);
    expect(again.calls.map((c) => c.method)).toEqual(['GET']);
    expect(again.steps).toEqual([{ name: 'note', result: first.steps[0]?.result, reused: true }]);
  });

  it('calls a given API over HTTP instead (`api: { url, token }`)', async () => {
    const sandbox = createSandbox({ token: 'tok_http' });
    const server = await sandbox.listen(0, '127.0.0.1');
    try {
      const run = await testSchedule(digest, { at: TICK, api: { url: server.baseUrl, token: 'tok_http' } });
      expect(run.outcome).toBe('completed');
      expect(run.sandbox).toBeUndefined();
      expect(sandbox.state.log.list().map((r) => [r.method, r.path, r.status])).toEqual(run.calls.map((c) => [c.method, c.path, c.status]));
      await expect(testSchedule(digest, { api: { url: server.baseUrl, token: 'tok_http' }, sandbox })).rejects.toThrow(
        'testSchedule: give either api or sandbox, not both',
      );
    } finally {
      await server.close();
    }
  });

  it('refuses what is not a schedule, a bad tick and a bad attempt; defaults the tick to now', async () => {
    const handler = defineHandler({ id: 'h', on: ['lead.won'], async handle() {} });
    await expect(testSchedule(handler as never)).rejects.toThrow(
      'testSchedule: expected a schedule made by defineSchedule as the first argument',
    );
    await expect(testSchedule(digest, { at: 'tomorrow' })).rejects.toThrow(
      'testSchedule: at must be a Date, an ISO time or ms since the epoch, got "tomorrow"',
    );
    await expect(testSchedule(digest, { attempt: 0 })).rejects.toThrow('testSchedule: attempt must be a positive integer, got 0');
    const before = Date.now();
    const now = await testSchedule(digest);
    expect(Date.parse(now.tick)).toBeGreaterThanOrEqual(before);
    expect(now.delivery.key).toBe(`schedule:digest:${now.tick}`);
  });
});
