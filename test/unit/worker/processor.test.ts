/** The `handlers` job processor without BullMQ or Redis: each decision it takes, on an injected clock. */
import { describe, expect, test } from 'vitest';
import { RateLimitedError, TokenExpiredError } from '../../../src/api/errors.js';
import { UnrecoverableError as BullUnrecoverable } from 'bullmq';
import { defineHandler, HandlerConfigError, NonRetriableError, UnrecoverableError, type Handler } from '../../../src/handler/define.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import { LifecycleBus } from '../../../src/lifecycle/bus.js';
import { createHandlerProcessor, type HandlerJobView } from '../../../src/worker/processor.js';
import { HOLD_IN_PLACE_MS, PARKED_MS, UNCLAIMED_MS } from '../../../src/worker/flow-checks.js';
import type { OrderClaim } from '../../../src/queue/order.js';
import { deadRunAction } from '../../../src/queue/flow-dead.js';
import { MemoryStepStore } from '../../../src/worker/steps.js';
import { match } from '../../support/match.js';
import { memoryLogger } from '../../support/service.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const data: HandlerJobData = {
  key: 'evt_proc_1',
  handlerId: 'h',
  receivedAt: '2026-06-01T11:59:59Z',
  event: {
    id: 'evt_proc_1',
    name: 'lead.won',
    createdAt: null,
    data: { id: 1, contact_id: 2, name: 'n', value: null, source: null, outcome: 'won' },
  },
};
const job = (over: Partial<HandlerJobView> = {}): HandlerJobView => ({
  id: 'job-1',
  data,
  timestamp: NOW - 1_000,
  attemptsMade: 0,
  attempts: 10,
  ...over,
});

function processor(handle: Handler['handle'], extra: { random?: () => number } = {}) {
  const { log, lines } = memoryLogger();
  const seen: { attempt: number }[] = [];
  const reports: unknown[] = [];
  const h = defineHandler({
    id: 'h',
    on: ['lead.won'],
    handle: async (e, ctx) => {
      seen.push({ attempt: ctx.delivery.attempt });
      await handle(e, ctx);
    },
  });
  const run = createHandlerProcessor({
    set: new HandlerSet(handlerSnapshot([h], undefined, {})),
    api: undefined,
    steps: new MemoryStepStore(),
    log,
    // What the lifecycle's attempt-ended says of the run (the metrics' onHandler report).
    lifecycle: new LifecycleBus().subscribe({
      'attempt-ended': (e) => {
        if (e.run) reports.push({ handler: e.attempt.handler, ...e.run });
      },
    }),
    now: () => NOW,
    random: extra.random ?? (() => 0),
  });
  return { run, lines, seen, reports };
}

const rateLimited = () => new RateLimitedError({ status: 429, message: 'slow down', retryAfterMs: 7_000 });

describe('handler job processor', () => {
  test('a run that succeeds completes with its duration, reported to the hooks; the attempt number is 1 + attempts made', async () => {
    const p = processor(async () => {});
    const decision = await p.run(job({ attemptsMade: 2 }));
    expect(decision.kind).toBe('completed');
    expect(p.seen).toEqual([{ attempt: 3 }]);
    expect(p.reports).toEqual([expect.objectContaining({ handler: 'h', event: 'lead.won', outcome: 'completed' })]);
  });

  test('a plain error retries with that error', async () => {
    const boom = new Error('boom');
    const decision = await processor(async () => {
      throw boom;
    }).run(job());
    expect(decision).toEqual({ kind: 'retry', error: boom });
  });

  test('the same error on the last attempt dead-letters, saying no retry is left: the log line and the hooks say dead too', async () => {
    const boom = new Error('boom');
    const p = processor(async () => {
      throw boom;
    });
    const decision = await p.run(job({ attemptsMade: 1, attempts: 2 }));
    expect(decision).toEqual({ kind: 'dead', reason: 'Error: boom (attempt 2 of 2: no retry left)', error: boom });
    expect(p.reports).toEqual([expect.objectContaining({ handler: 'h', outcome: 'dead' })]);
    const failed = p.lines
      .map((l) => JSON.parse(l) as { msg: string; outcome?: string; attempt?: number; reason?: string })
      .filter((l) => l.msg === 'handler failed');
    expect(failed).toEqual([
      expect.objectContaining({ outcome: 'dead', attempt: 2, reason: 'Error: boom (attempt 2 of 2: no retry left)' }),
    ]);
    // One attempt in all: its first run is its last.
    expect(
      await processor(async () => {
        throw boom;
      }).run(job({ attempts: 1 })),
    ).toMatchObject({ kind: 'dead' });
  });

  test('an unrecoverable error dead-letters with the reason and the error', async () => {
    const err = new HandlerConfigError('missing thing');
    const decision = await processor(async () => {
      throw err;
    }).run(job());
    expect(decision).toEqual({ kind: 'dead', reason: match.stringContaining('missing thing'), error: err });
  });

  test('a NonRetriableError is dead on its first attempt of many, with its message; so are the deprecated UnrecoverableError and, for one release, bullmq’s', async () => {
    for (const err of [
      new NonRetriableError('no such stage'),
      new UnrecoverableError('no such stage'),
      new BullUnrecoverable('no such stage'),
    ]) {
      const p = processor(async () => {
        throw err;
      });
      const decision = await p.run(job({ attemptsMade: 0, attempts: 10 }));
      expect(decision).toEqual({ kind: 'dead', reason: `${err.name}: no such stage`, error: err });
      expect(p.reports).toEqual([expect.objectContaining({ handler: 'h', outcome: 'dead' })]);
    }
  });

  test('a 429 waits for Retry-After on the injected clock without spending an attempt', async () => {
    const decision = await processor(async () => {
      throw rateLimited();
    }).run(job());
    expect(decision).toEqual({ kind: 'delay', until: NOW + 7_000 });
  });

  test('an expired token pauses, stamped with the injected clock', async () => {
    const decision = await processor(async () => {
      throw new TokenExpiredError({ status: 401, message: 'expired' });
    }).run(job());
    expect(decision).toMatchObject({ kind: 'pause', code: 'token_expired', at: '2026-06-01T12:00:00.000Z' });
    expect(decision.kind === 'pause' && decision.reason).toContain('Replace WORKSPACE_API_TOKEN');
  });

  test('a job for a handler this process does not run is handed back with jitter, warned about once', async () => {
    const p = processor(async () => {}, { random: () => 0.5 });
    const other = { ...data, handlerId: 'elsewhere' };
    const first = await p.run(job({ data: other, timestamp: NOW - 2_000 }));
    // 100 ms + age / 20 (100 ms) + 0.5 * 200 ms of jitter
    expect(first).toEqual({ kind: 'delay', until: NOW + 300 });
    const old = await p.run(job({ data: other, timestamp: NOW - 10 * 60_000 }));
    expect(old).toEqual({ kind: 'delay', until: NOW + 5_000 + 100 });
    expect(p.lines.filter((l) => l.includes('does not run')).length).toBe(1);
    expect(p.seen).toEqual([]);
  });

  test('a job nobody has claimed for an hour is dead-lettered with the reason', async () => {
    const decision = await processor(async () => {}).run(job({ data: { ...data, handlerId: 'gone' }, timestamp: NOW - UNCLAIMED_MS - 1 }));
    expect(decision).toEqual({ kind: 'dead', reason: match.stringContaining('no worker runs handler "gone"') });
  });
});

describe('handler job processor with a handler set replaced while it runs (switchyard dev)', () => {
  test('a job that started on v1 finishes on v1; the next job runs v2', async () => {
    const { log } = memoryLogger();
    const ran: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const v1 = defineHandler({
      id: 'h',
      on: ['lead.won'],
      handle: async () => {
        ran.push('v1 start');
        await gate;
        ran.push('v1 end');
      },
    });
    const v2 = defineHandler({
      id: 'h',
      on: ['lead.won'],
      handle: async () => {
        ran.push('v2');
      },
    });
    const set = new HandlerSet(handlerSnapshot([v1], undefined, {}));
    const run = createHandlerProcessor({ set, api: undefined, steps: new MemoryStepStore(), log, now: () => NOW });
    const first = run(job());
    await new Promise((r) => setImmediate(r));
    expect(ran).toEqual(['v1 start']);
    set.replace(handlerSnapshot([v2], undefined, {}));
    release();
    expect((await first).kind).toBe('completed');
    expect((await run(job({ data: { ...data, key: 'evt_proc_2' } }))).kind).toBe('completed');
    expect(ran).toEqual(['v1 start', 'v1 end', 'v2']);
  });
});

describe('handler job processor: order lines and debounce bursts', () => {
  /** A recording port in place of Redis: what the processor asks of the line and the burst. */
  function flowProcessor(
    def: { skipStale?: boolean; onDead?: 'release' | 'block'; maxAge?: string },
    claim: OrderClaim | (() => OrderClaim),
    handle: Handler['handle'] = async () => {},
  ) {
    const calls: string[] = [];
    const h = defineHandler({
      id: 'h',
      on: ['lead.won'],
      orderBy: 'contact',
      ...def,
      handle: async (e, ctx) => {
        calls.push('handle');
        await handle(e, ctx);
      },
    });
    const { log } = memoryLogger();
    const run = createHandlerProcessor({
      set: new HandlerSet(handlerSnapshot([h], undefined, {})),
      api: undefined,
      steps: new MemoryStepStore(),
      log,
      now: () => NOW,
      sleep: async (ms) => {
        calls.push(`sleep ${ms}`);
      },
      flow: {
        claim: async () => {
          calls.push('claim');
          return typeof claim === 'function' ? claim() : claim;
        },
        release: async (_d, _id, outcome) => {
          calls.push(`release:${outcome}`);
        },
        take: async () => ({ kind: 'gone' as const }),
        finish: async () => {
          calls.push('finish');
        },
        // The one onDead decision, as flow control makes it (src/queue/flow-dead.ts).
        onDead: async (run, handler) => {
          const action = deadRunAction(run.data, handler);
          calls.push(`dead:${action}`);
          return action;
        },
      },
    });
    return { run, calls };
  }
  const ordered = (over: Partial<HandlerJobView> = {}) =>
    job({ data: { ...data, order: { key: 'contact:2', member: 'm', at: NOW - 5_000 } }, ...over });

  test('a run that may run, runs, then releases its place as applied', async () => {
    const p = flowProcessor({}, { kind: 'run', lastAppliedAt: null });
    expect((await p.run(ordered())).kind).toBe('completed');
    expect(p.calls).toEqual(['claim', 'handle', 'release:completed']);
  });

  test('a run whose key is held by another parks without spending an attempt', async () => {
    const p = flowProcessor({}, { kind: 'park' });
    expect(await p.run(ordered())).toEqual({ kind: 'delay', until: NOW + PARKED_MS });
    expect(p.calls).toEqual(['claim']);
  });

  test('a run held for a delivery received before it that is still to be fanned out waits in its slot, then runs', async () => {
    const claims: OrderClaim[] = [
      { kind: 'hold', ms: 25 },
      { kind: 'hold', ms: 25 },
      { kind: 'run', lastAppliedAt: null },
    ];
    const p = flowProcessor({}, () => claims.shift() ?? { kind: 'run', lastAppliedAt: null });
    expect((await p.run(ordered())).kind).toBe('completed');
    expect(p.calls).toEqual(['claim', 'sleep 25', 'claim', 'sleep 25', 'claim', 'handle', 'release:completed']);
  });

  test('a run held longer than HOLD_IN_PLACE_MS lets its slot go and waits without spending an attempt', async () => {
    const p = flowProcessor({}, { kind: 'hold', ms: 500 });
    expect(await p.run(ordered())).toEqual({ kind: 'delay', until: NOW + 500 });
    expect(p.calls.filter((c) => c === 'claim')).toHaveLength(HOLD_IN_PLACE_MS / 500 + 1);
    expect(p.calls).not.toContain('handle');
  });

  test('a re-run whose first run already finished (its worker died before recording it) completes without running', async () => {
    const p = flowProcessor({}, { kind: 'completed' });
    expect(await p.run(ordered({ attemptsMade: 1 }))).toEqual({ kind: 'completed', result: { ms: 0, skipped: 'already_completed' } });
    expect(p.calls).toEqual(['claim']);
  });

  test('skipStale: an event older than the last applied one is skipped and releases its place', async () => {
    const p = flowProcessor({ skipStale: true }, { kind: 'run', lastAppliedAt: NOW - 1_000 });
    expect(await p.run(ordered())).toEqual({ kind: 'completed', result: { ms: 0, skipped: 'stale' } });
    expect(p.calls).toEqual(['claim', 'release:skipped']);
  });

  test('a retry keeps the place; the last attempt, dead, releases it (onDead release) or keeps it (block)', async () => {
    const fail = async () => {
      throw new Error('boom');
    };
    const keep = flowProcessor({}, { kind: 'run', lastAppliedAt: null }, fail);
    expect((await keep.run(ordered({ attemptsMade: 3, attempts: 10 }))).kind).toBe('retry');
    expect(keep.calls).toEqual(['claim', 'handle']);
    const last = flowProcessor({}, { kind: 'run', lastAppliedAt: null }, fail);
    expect((await last.run(ordered({ attemptsMade: 9, attempts: 10 }))).kind).toBe('dead');
    expect(last.calls).toEqual(['claim', 'handle', 'dead:release']);
    const block = flowProcessor({ onDead: 'block' }, { kind: 'run', lastAppliedAt: null }, fail);
    expect((await block.run(ordered({ attemptsMade: 9, attempts: 10 }))).kind).toBe('dead');
    expect(block.calls).toEqual(['claim', 'handle', 'dead:hold']);
  });

  test('maxAge: an ordered event older than the limit is skipped and releases its place', async () => {
    const p = flowProcessor({ maxAge: '1s' }, { kind: 'run', lastAppliedAt: null });
    expect(await p.run(ordered())).toEqual({ kind: 'completed', result: { ms: 0, skipped: 'max_age' } });
    expect(p.calls).toEqual(['claim', 'release:skipped']);
  });
});
