/** One handler run without BullMQ or Redis: timeout and signal, ctx.step's JSON round trip, the client handed to handlers. */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createApiClient } from '../../../src/api/client.js';
import { defineHandler, HandlerTimeoutError, type Handler } from '../../../src/handler/define.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { classify } from '../../../src/worker/classify.js';
import { runHandler } from '../../../src/worker/runner.js';
import { MemoryStepStore } from '../../../src/worker/steps.js';
import { memoryLogger } from '../../support/service.js';

const job: HandlerJobData = {
  key: 'evt_run_1',
  handlerId: 'h',
  receivedAt: '2026-01-01T00:00:00Z',
  event: {
    id: 'evt_run_1',
    name: 'lead.won',
    createdAt: null,
    data: { id: 1, contact_id: 2, name: 'n', value: null, source: null, outcome: 'won' },
  },
};

function run(
  handler: Handler,
  opts: { signal?: AbortSignal | null; steps?: MemoryStepStore; settings?: Record<string, unknown>; api?: boolean } = {},
) {
  const { log, lines } = memoryLogger();
  const api = opts.api
    ? () => createApiClient({ baseUrl: 'http://127.0.0.1:1/api/v1', token: 't', fetch: async () => new Response('{}') })
    : undefined;
  const outcome = runHandler(handler, job, {
    api,
    steps: opts.steps ?? new MemoryStepStore(),
    log,
    settings: opts.settings ?? {},
    signal: opts.signal === null ? undefined : (opts.signal ?? new AbortController().signal),
    delivery: { key: job.key, receivedAt: job.receivedAt, attempt: 1, source: 'webhook' },
  });
  return { outcome, lines };
}

describe('timeout', () => {
  test('a run past its timeout fails as retryable with HandlerTimeoutError, and its ctx.signal fires', async () => {
    let seen: AbortSignal | undefined;
    const slow = defineHandler({
      id: 'slow',
      on: ['lead.won'],
      timeout: 50,
      handle: (_e, ctx) => {
        seen = ctx.signal;
        return new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      },
    });
    const started = Date.now();
    const { outcome, lines } = run(slow);
    const result = await outcome;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(HandlerTimeoutError);
    expect(result.error).toMatchObject({ code: 'handler_timeout', handlerId: 'slow', timeoutMs: 50 });
    expect(result.verdict).toEqual({
      kind: 'retry',
      reason: 'HandlerTimeoutError: handler "slow" did not finish within its timeout of 50ms',
    });
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(result.error);
    expect(lines.join('')).toContain('"outcome":"retry"');
  });

  test('a run that ignores its signal still fails at the timeout; how it ends later is logged, not an unhandled rejection', async () => {
    const stubborn = defineHandler({
      id: 'stubborn',
      on: ['lead.won'],
      timeout: 30,
      handle: () => new Promise<void>((_, reject) => setTimeout(() => reject(new Error('late failure')), 80)),
    });
    const { outcome, lines } = run(stubborn);
    expect((await outcome).ok).toBe(false);
    await new Promise((r) => setTimeout(r, 120));
    expect(lines.join('')).toContain('handler failed after its timeout');
  });

  test('without a worker signal: ctx.signal is one signal per run, made when read, never aborted; with a timeout it still fires', async () => {
    const seen: AbortSignal[] = [];
    const reads = defineHandler({
      id: 'reads',
      on: ['lead.won'],
      handle: async (_e, ctx) => {
        seen.push(ctx.signal, ctx.signal);
      },
    });
    expect((await run(reads, { signal: null }).outcome).ok).toBe(true);
    expect((await run(reads, { signal: null }).outcome).ok).toBe(true);
    expect(seen[0]).toBeInstanceOf(AbortSignal);
    expect(seen[0]).toBe(seen[1]);
    expect(seen[2]).not.toBe(seen[0]);
    expect(seen.some((sg) => sg.aborted)).toBe(false);
    let fired: AbortSignal | undefined;
    const slow = defineHandler({
      id: 'slow',
      on: ['lead.won'],
      timeout: 30,
      handle: (_e, ctx) =>
        new Promise<void>((resolve) => {
          fired = ctx.signal;
          ctx.signal.addEventListener('abort', () => resolve());
        }),
    });
    const out = await run(slow, { signal: null }).outcome;
    expect(out.ok).toBe(false);
    expect(fired?.aborted).toBe(true);
  });

  test('a run within its timeout completes; the worker’s own signal still reaches ctx.signal', async () => {
    const quick = defineHandler({ id: 'quick', on: ['lead.won'], timeout: '5s', handle: async () => {} });
    expect((await run(quick).outcome).ok).toBe(true);
    const stop = new AbortController();
    let aborted = false;
    const waits = defineHandler({
      id: 'waits',
      on: ['lead.won'],
      timeout: '5s',
      handle: (_e, ctx) =>
        new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          }),
        ),
    });
    const pending = run(waits, { signal: stop.signal }).outcome;
    stop.abort();
    expect((await pending).ok).toBe(true);
    expect(aborted).toBe(true);
  });

  test('a run with a timeout leaves nothing on the worker’s signal once it ends, and sees a signal aborted before it started', async () => {
    const stop = new AbortController();
    let listeners = 0;
    const add = stop.signal.addEventListener.bind(stop.signal);
    const remove = stop.signal.removeEventListener.bind(stop.signal);
    stop.signal.addEventListener = (...a: Parameters<typeof add>) => {
      listeners++;
      add(...a);
    };
    stop.signal.removeEventListener = (...a: Parameters<typeof remove>) => {
      listeners--;
      remove(...a);
    };
    const quick = defineHandler({ id: 'quick', on: ['lead.won'], timeout: '5s', handle: async () => {} });
    for (let i = 0; i < 3; i++) expect((await run(quick, { signal: stop.signal }).outcome).ok).toBe(true);
    expect(listeners).toBe(0);
    stop.abort(new Error('worker closing'));
    let seen: unknown;
    const late = defineHandler({
      id: 'late',
      on: ['lead.won'],
      timeout: '5s',
      handle: async (_e, ctx) => {
        seen = ctx.signal.aborted && ctx.signal.reason;
      },
    });
    expect((await run(late, { signal: stop.signal }).outcome).ok).toBe(true);
    expect(String(seen)).toBe('Error: worker closing');
  });

  test('classify: a NonRetriableError of another copy of the package (its brand, not this class) is dead too', () => {
    class OtherCopy extends Error {}
    Object.defineProperty(OtherCopy.prototype, Symbol.for('switchyard.nonRetriable'), { value: true });
    expect(classify(new OtherCopy('stop'))).toEqual({ kind: 'dead', reason: 'Error: stop' });
    expect(classify(new Error('stop')).kind).toBe('retry');
  });

  test('classify retries a HandlerTimeoutError (it is no NonRetriableError)', () => {
    expect(classify(new HandlerTimeoutError('h', 1_000)).kind).toBe('retry');
  });
});

describe('ctx.step returns what JSON gives back, on the first run too', () => {
  test('a Date comes back as its ISO string, undefined properties go', async () => {
    const results: unknown[] = [];
    const h = defineHandler({
      id: 'steps',
      on: ['lead.won'],
      async handle(_e, ctx) {
        results.push(await ctx.step('when', async () => ({ at: new Date('2026-02-03T04:05:06Z'), gone: undefined, n: 1 })));
      },
    });
    const steps = new MemoryStepStore();
    expect((await run(h, { steps }).outcome).ok).toBe(true);
    expect((await run(h, { steps }).outcome).ok).toBe(true); // a retry: the stored result
    expect(results).toEqual([
      { at: '2026-02-03T04:05:06.000Z', n: 1 },
      { at: '2026-02-03T04:05:06.000Z', n: 1 },
    ]);
    expect(Object.keys(results[0] as object)).toEqual(['at', 'n']);
  });
});

describe('the context', () => {
  test('carries the parsed settings and no env; its client has no rate limiter', async () => {
    let seen: Record<string, unknown> = {};
    const h = defineHandler({
      id: 'ctx',
      on: ['lead.won'],
      settings: z.object({ N: z.coerce.number() }),
      handle(_e, ctx) {
        seen = {
          settings: ctx.settings,
          hasEnv: 'env' in ctx,
          api: Object.keys(ctx.api),
          limiter: (ctx.api as Record<string, unknown>)['rateLimiter'],
        };
      },
    });
    expect((await run(h, { settings: { N: 4 }, api: true }).outcome).ok).toBe(true);
    expect(seen['settings']).toEqual({ N: 4 });
    expect(seen['hasEnv']).toBe(false);
    expect(seen['api']).toContain('contacts');
    expect(seen['api']).not.toContain('rateLimiter');
    expect(seen['limiter']).toBeUndefined();
  });
});

describe("the run's logger", () => {
  function quietRun(handler: Handler, level: string) {
    const { log, lines } = memoryLogger(level);
    let children = 0;
    const child = log.child.bind(log);
    log.child = ((...args: Parameters<typeof log.child>) => {
      children += 1;
      return child(...args);
    }) as typeof log.child;
    const outcome = runHandler(handler, job, {
      api: undefined,
      steps: new MemoryStepStore(),
      log,
      settings: {},
      signal: undefined,
      delivery: { key: job.key, receivedAt: job.receivedAt, attempt: 1, source: 'webhook' },
    });
    return { outcome, lines, children: () => children };
  }

  test('a run that logs nothing at its level builds no child logger', async () => {
    const quiet = defineHandler({ id: 'quiet', on: ['lead.won'], handle: () => undefined });
    const r = quietRun(quiet, 'warn');
    expect((await r.outcome).ok).toBe(true);
    expect(r.children()).toBe(0);
    expect(r.lines).toEqual([]);
  });

  test("ctx.log and the runner's own lines carry the run's bindings, one child per run", async () => {
    const talks = defineHandler({
      id: 'talks',
      on: ['lead.won'],
      handle: (_e, ctx) => {
        ctx.log.info('hello');
        ctx.log.info('again');
      },
    });
    const r = quietRun(talks, 'info');
    expect((await r.outcome).ok).toBe(true);
    expect(r.children()).toBe(1);
    const lines = r.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['msg'])).toEqual(['hello', 'again', 'handler done']);
    for (const l of lines) expect(l).toMatchObject({ delivery: job.key, event: 'lead.won', handler: 'talks', attempt: 1 });
  });
});
