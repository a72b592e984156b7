import { fileURLToPath } from 'node:url';
import { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/events/envelope.js';
import type { WorkspaceEvent } from '../../../src/events/catalogue.js';
import { loadHandlerDir } from '../../../src/handler/loader.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { handlerQueueList, openHandlerQueues, type HandlerQueues } from '../../../src/queue/queues.js';
import { WaitStore } from '../../../src/queue/waits/wait-store.js';
import { startWorker, type WorkerService } from '../../../src/runtime/worker.js';
import { eventChecks, sweepWakes } from '../../../src/worker/waits.js';
import { ChangeClaims } from '../../../src/queue/change.js';
import { FanOutChecks } from '../../../src/queue/fan-out-check.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { memoryLogger, testConfig, waitFor } from '../../support/service.js';

const WF = fileURLToPath(new URL('../../support/handlers/workflow', import.meta.url));
type Entry = Record<string, unknown> & { h: string };
const g = globalThis as { __syWf?: Entry[]; __syWfHook?: (event: unknown) => void };

/**
 * The race of a wait and its event, with the real worker (startWorker: processor, applyDecision with
 * moveToDelayed, the re-read after it) and the fan-out's port (eventChecks): each run registers its
 * wait while the event that answers it is delivered at a random moment around it: before the
 * registration, between the registration and the move to delayed, or after. Every run must resume
 * exactly once with its event (no missed match: a lost wake would leave it parked for its 1 h
 * timeout; no double wake: it never runs past the wait twice), and none is lost.
 */
describe('a wait and its event racing (real Redis, real BullMQ worker)', () => {
  const prefix = uniquePrefix('race');
  let redis: Redis;
  let queues: HandlerQueues;
  let worker: WorkerService;
  beforeAll(async () => {
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    queues = openHandlerQueues(redis, prefix);
    const env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix, HANDLERS_DIR: WF, WORKER_CONCURRENCY: '64', HISTORY: 'off' };
    const dir = await loadHandlerDir(WF, ['wf-racer']);
    const set = new HandlerSet(
      handlerSnapshot(
        dir.handlers.map((l) => l.handler),
        undefined,
        env,
        [],
      ),
    );
    worker = await startWorker(
      { config: testConfig(env), redisUrl: testRedisUrl(), log: memoryLogger('warn').log, hooks: undefined, set },
      { handlers: queues },
    );
  });
  afterAll(async () => {
    delete g.__syWfHook;
    await worker?.close(0);
    await Promise.allSettled(handlerQueueList(queues).map((q) => q.close()));
    redis?.disconnect();
  });

  it('2 000 rounds: every run resumes once with its event; none missed, none woken twice, none lost', async () => {
    g.__syWf = [];
    const log = memoryLogger('warn').log;
    const waits = new WaitStore(redis, prefix, 3_600_000);
    await waits.watch(['message.received']);
    const byName = new Map(Object.values(queues).map((q) => [q.name, q]));
    const promoted: string[] = [];
    const deliverEvent = eventChecks({
      waits,
      checks: new FanOutChecks(redis, new ChangeClaims(redis, prefix, 3_600_000), waits),
      log,
      handlers: () => [],
      wake: async (run) => {
        const at = run.indexOf('|');
        const job = await Job.fromId(byName.get(run.slice(0, at)) as (typeof queues)['normal'], run.slice(at + 1));
        promoted.push(run);
        await job?.promote().catch(() => undefined);
      },
    });
    const errors: unknown[] = [];
    g.__syWfHook = (e) => {
      const event = e as WorkspaceEvent<'conversation.created'>;
      const conv = event.data.id;
      const reply = {
        id: `evt_reply_${conv}`,
        name: 'message.received',
        createdAt: new Date().toISOString(),
        data: {
          id: conv,
          conversation_id: conv,
          type: 'message',
          direction: 'inbound',
          sender_type: 'contact',
          user_id: null,
          body: 'r',
          content_type: 'text',
          status: null,
          created_at: new Date().toISOString(),
        },
      } as unknown as WorkspaceEvent;
      // Received after the wait begins (lookback false: only later events count), delivered 0-6 ms from now.
      const delivery = {
        key: `evt_reply_${conv}`,
        name: 'message.received',
        receivedAt: new Date(Date.now() + 1_000).toISOString(),
        secretIndex: 0,
        headers: {},
      };
      const go = () =>
        deliverEvent(reply, delivery, null)
          .then((r) => r.waking)
          .catch((err: unknown) => errors.push(err));
      const r = conv % 4;
      if (r === 0) void go();
      else if (r === 1) setImmediate(() => void go());
      else setTimeout(() => void go(), conv % 7);
    };
    const rounds = 2_000;
    const jobs = Array.from({ length: rounds }, (_, i) => {
      const conv = 100_000 + i;
      const key = `evt_race_${prefix}_${conv}`;
      const data: HandlerJobData = {
        key,
        handlerId: 'wf-racer',
        receivedAt: new Date().toISOString(),
        event: {
          id: key,
          name: 'conversation.created',
          createdAt: new Date().toISOString(),
          data: {
            id: conv,
            contact_id: 7,
            channel: { id: 1, name: 'W', type: 'whatsapp' },
            status: 'open',
            subject: null,
            assignee: null,
            last_message_at: null,
            closed_at: null,
            created_at: new Date().toISOString(),
          },
        },
      };
      return { name: 'wf-racer', data, opts: { jobId: jobIdFor(key, 'wf-racer'), attempts: 3, removeOnComplete: false } };
    });
    for (let i = 0; i < jobs.length; i += 500) await queues.normal.addBulk(jobs.slice(i, i + 500));
    const done = () => (g.__syWf ?? []).filter((e) => e.h === 'racer' && e['at'] === 'done');
    await waitFor(() => done().length >= rounds, 120_000, 100);
    await new Promise((r) => setTimeout(r, 1_500)); // a double wake would show up as a second `done`
    expect(errors).toEqual([]);
    const doneByConv = new Map<unknown, number>();
    for (const e of done()) doneByConv.set(e['conv'], (doneByConv.get(e['conv']) ?? 0) + 1);
    expect(doneByConv.size).toBe(rounds);
    expect([...doneByConv.values()].every((n) => n === 1)).toBe(true);
    expect(done().every((e) => e['got'] === `evt_reply_${String(e['conv'])}`)).toBe(true);
    // Each ran once (matched at registration) or twice (parked, woken once).
    const starts = new Map<unknown, number>();
    for (const e of (g.__syWf ?? []).filter((x) => x.h === 'racer' && x['at'] === 'start'))
      starts.set(e['conv'], (starts.get(e['conv']) ?? 0) + 1);
    expect([...starts.values()].every((n) => n === 1 || n === 2)).toBe(true);
    // Every order happened: answered at registration, and woken after parking (by the event's promotion or the re-read).
    expect([...starts.values()].some((n) => n === 1)).toBe(true);
    expect([...starts.values()].some((n) => n === 2)).toBe(true);
    const counts = await queues.normal.getJobCounts('completed', 'failed', 'delayed', 'wait', 'active');
    expect(counts).toMatchObject({ completed: rounds, failed: 0, delayed: 0, wait: 0, active: 0 });
    // Nothing is left to wake, nothing parked.
    expect(await redis.zcard(`${prefix}:wait:wake`)).toBe(0);
    expect(await redis.zcard(`${prefix}:wf:due`)).toBe(0);
  }, 180_000);

  it('a wake-up lost with its waker (it died after the event answered the wait) is redone by the sweep, once', async () => {
    const p2 = uniquePrefix('sweep');
    const waits = new WaitStore(redis, p2, 3_600_000);
    const log = memoryLogger('warn').log;
    const w = await waits.register({
      id: 'run:reply',
      key: 'conversation:5',
      event: 'message.received',
      since: 0,
      dueAt: Date.now() + 3_600_000,
      run: 'handlers|job-5',
    });
    expect(w.status).toBe('pending');
    const woken: string[] = [];
    const dying = eventChecks({
      waits,
      checks: new FanOutChecks(redis, new ChangeClaims(redis, p2, 3_600_000), waits),
      log,
      handlers: () => [],
      wake: async () => {
        throw new Error('killed before promoting');
      },
    });
    const event = { id: 'evt_5', name: 'message.received', createdAt: null, data: { conversation_id: 5 } } as unknown as WorkspaceEvent;
    await expect(
      dying(
        event,
        { key: 'evt_5', name: 'message.received', receivedAt: new Date().toISOString(), secretIndex: 0, headers: {} },
        null,
      ).then((r) => r.waking),
    ).rejects.toThrow(/killed/);
    const ports = {
      waits,
      log,
      wake: async (run: string) => {
        woken.push(run);
      },
    };
    // Within its grace it is left alone (its own waker may still be at it); after it, redone once.
    expect(await sweepWakes(ports, Date.now(), 5_000)).toBe(0);
    expect(await sweepWakes(ports, Date.now() + 6_000, 5_000)).toBe(1);
    expect(await sweepWakes(ports, Date.now() + 7_000, 5_000)).toBe(0);
    expect(woken).toEqual(['handlers|job-5']);
    expect((await waits.get('run:reply'))?.status).toBe('matched');
  });
});
