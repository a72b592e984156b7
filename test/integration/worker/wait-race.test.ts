/**
 * The race of durable waits: the awaited event arriving just before, while,
 * or just after a run registers its wait (and while its job is being parked),
 * thousands of times.
 *
 * 1. The WaitStore alone: a registration and a matching event sent at the
 *    same moment on two connections, many times over: each event is seen by
 *    exactly one of the two scripts (never by neither, never by both).
 * 2. The whole pipeline in this process (receiver, pump, fan-out, BullMQ
 *    workers, sandbox): 2 000 runs, each sends its own reply from inside the
 *    handler at a varied point around `ctx.waitForEvent` (without waiting, after
 *    the receiver accepted it, after a random pause, after it was fanned out),
 *    with many runs in flight at once. Every run must get its reply (no missed
 *    match: a miss would leave it parked for the 1 h timeout), go past the wait
 *    once (no double wake), write once, and complete (no lost run).
 */
import { fileURLToPath } from 'node:url';
import { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId, messageBody } from '../../support/events.js';
import { handlerJobCounts, sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { WaitStore } from '../../../src/queue/waits/wait-store.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';
import { EVENTS_QUEUE } from '../../../src/queue/names.js';
import { jobIdFor } from '../../../src/events/envelope.js';

const RACE = fileURLToPath(new URL('../../support/handlers/workflow-race', import.meta.url));

type Tally = Map<string, { step: number; attempt: number; woke: number; done: number; got: string[]; times: number[] }>;
const g = globalThis as {
  __syWfr?: Tally;
  __syWfrHook?: (event: { id: string; data: { id: number } }) => Promise<void> | void;
  __syWfrConv?: number;
};

describe('WaitStore: a registration and a matching event at the same moment', () => {
  let a: Redis;
  let b: Redis;
  beforeAll(() => {
    a = new Redis(testRedisUrl());
    b = new Redis(testRedisUrl());
  });
  afterAll(() => {
    a.disconnect();
    b.disconnect();
  });

  it('5 000 rounds on two connections: each event answers its wait exactly once, by the registration or by the event', async () => {
    const prefix = uniquePrefix('wrace');
    const reg = new WaitStore(a, prefix, 3_600_000);
    const ev = new WaitStore(b, prefix, 3_600_000);
    await reg.watch(['message.received']);
    const ROUNDS = 5_000;
    const BATCH = 100;
    let byRegistration = 0;
    let byEvent = 0;
    const problems: string[] = [];
    for (let start = 0; start < ROUNDS; start += BATCH) {
      await Promise.all(
        Array.from({ length: BATCH }, async (_, j) => {
          const i = start + j;
          const key = `conversation:${i}`;
          const since = 1_000_000 + i;
          const at = since + 1 + (i % 3);
          const delay = i % 4;
          const registration = (async () => {
            if (delay === 1) await Promise.resolve();
            return reg.register({ id: `w${i}`, key, event: 'message.received', since, dueAt: since + 3_600_000, run: `q|${i}` });
          })();
          const event = (async () => {
            if (delay === 2) await Promise.resolve();
            if (delay === 3) await new Promise((r) => setImmediate(r));
            return ev.deliver(
              { deliveryKey: `d${i}`, name: 'message.received', receivedAt: at, body: `{"i":${i}}`, keys: [key] },
              since + 10,
              true,
            );
          })();
          const [st, woken] = await Promise.all([registration, event]);
          const atRegistration = st.status === 'matched';
          const atEvent = woken.some((w) => w.id === `w${i}`);
          if (atRegistration === atEvent) problems.push(`round ${i}: registration ${st.status}, event woke ${JSON.stringify(woken)}`);
          if (atRegistration) byRegistration++;
          if (atEvent) byEvent++;
          const final = await reg.get(`w${i}`);
          if (final?.status !== 'matched' || final.match?.deliveryKey !== `d${i}`)
            problems.push(`round ${i}: final state ${JSON.stringify(final)}`);
        }),
      );
    }
    console.log(`[wait-race] store: ${ROUNDS} rounds, answered at registration ${byRegistration}, by the event ${byEvent}`);
    expect(problems.slice(0, 10)).toEqual([]);
    expect(byRegistration + byEvent).toBe(ROUNDS);
    // Both orders happened (otherwise the test raced nothing).
    expect(byRegistration).toBeGreaterThan(0);
    expect(byEvent).toBeGreaterThan(0);
  }, 60_000);
});

describe("waitForEvent through the whole pipeline: the reply sent at varied points around the wait's registration", () => {
  let p: Pipeline;
  let conv: number;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: RACE, burst: 10_000, env: { WORKER_CONCURRENCY: '32' } });
    const r = await sandboxCall(p, 'GET', '/conversations');
    conv = (r.json.data as { id: number }[])[0]?.id as number;
    g.__syWfrConv = conv;
    g.__syWfr = new Map();
  });
  afterAll(async () => {
    g.__syWfrHook = undefined;
    await p?.close();
  });

  it(`${process.env['WFR_ROUNDS'] ?? 1_000} runs (WFR_ROUNDS), 32 at a time: every run gets its reply, wakes once, writes once, completes`, async () => {
    const ROUNDS = Number(process.env['WFR_ROUNDS'] ?? 1_000);
    const IN_FLIGHT = Number(process.env['WFR_IN_FLIGHT'] ?? 32);
    const BASE = 5_000_000;
    const tally = g.__syWfr as Tally;
    const replies = new Map<number, string>(); // conversation -> reply id
    const fired = new Set<string>();
    const modes = [0, 0, 0, 0, 0, 0];
    const events = p.events;
    // Mode 5 answers the wait the way fan-out does (src/worker/waits.ts: the event script, then promote, then ack),
    // but the moment the wait is registered: while the run's job is still active, before it is moved to delayed.
    const direct = new Redis(testRedisUrl());
    const store = new WaitStore(direct, p.prefix, 3_600_000);
    let promoteRefused = 0;
    const answerAtRegistration = async (event: { id: string; data: { id: number } }): Promise<void> => {
      const c = event.data.id;
      const waitId = `${jobIdFor(event.id, 'wfr-racer')}:w:reply`;
      await waitFor(async () => (await direct.hexists(`${p.prefix}:wait:state`, waitId)) === 1, 10_000, 0);
      const extra = Math.floor(Math.random() * 4);
      if (extra > 0) await new Promise((r) => setTimeout(r, extra - 1));
      const body = JSON.parse(messageBody('message.received', c, `reply ${c}`)) as {
        id: string;
        event: string;
        created_at: string;
        data: unknown;
      };
      replies.set(c, body.id);
      const woken = await store.deliver(
        {
          deliveryKey: body.id,
          name: body.event,
          receivedAt: Date.now(),
          keys: [`conversation:${c}`],
          body: JSON.stringify({ id: body.id, name: body.event, createdAt: body.created_at, data: body.data }),
        },
        Date.now(),
        true,
      );
      for (const wk of woken) {
        const job = await Job.fromId(p.handlers, wk.run.slice(wk.run.indexOf('|') + 1));
        await job?.promote().catch(() => {
          promoteRefused++;
        });
        await store.ack(wk.id);
      }
    };
    const answered = async (id: string) => (await events.getJob(jobIdFor(id)))?.finishedOn !== undefined;
    const postReply = async (c: number): Promise<string> => {
      const body = messageBody('message.received', c, `reply ${c}`);
      replies.set(c, deliveryId(body));
      const r = await deliver(p.receiverUrl, body);
      if (r.status !== 202) throw new Error(`reply answered ${r.status}`);
      return deliveryId(body);
    };
    // Called by the run right before ctx.waitForEvent (its first attempt only).
    g.__syWfrHook = async (event) => {
      if (fired.has(event.id)) return;
      fired.add(event.id);
      const c = event.data.id;
      const mode = (c * 7919) % 6;
      modes[mode] = (modes[mode] ?? 0) + 1;
      if (mode === 5) {
        answerAtRegistration(event).catch((err: unknown) => {
          console.error('mode 5 failed', err);
        });
        return;
      }
      const sent = postReply(c);
      switch (mode) {
        case 0: // not waited for: the reply races the registration and the park
          sent.catch(() => undefined);
          return;
        case 1: // accepted by the receiver (in the inbox), not fanned out yet
          await sent;
          return;
        case 2: // a random pause of 0–15 ms
          sent.catch(() => undefined);
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 16)));
          return;
        case 3: {
          // fanned out before the wait registers (the lookback's case)
          const id = await sent;
          await waitFor(() => answered(id), 10_000, 10);
          return;
        }
        default: // the next turn of the event loop
          sent.catch(() => undefined);
          await new Promise((r) => setImmediate(r));
      }
    };

    const started = Date.now();
    const triggers: { id: string; conv: number }[] = [];
    let unfinished = 0;
    const counter = setInterval(() => {
      unfinished = triggers.filter((t) => (tally.get(t.id)?.done ?? 0) === 0).length;
    }, 10);
    let next = 0;
    const sender = async () => {
      while (next < ROUNDS) {
        const i = next++;
        const c = BASE + i;
        const body = conversationBody('conversation.created', c, 'race');
        triggers.push({ id: deliveryId(body), conv: c });
        unfinished++;
        const r = await deliver(p.receiverUrl, body);
        if (r.status !== 202) throw new Error(`trigger answered ${r.status}`);
        // Keep about IN_FLIGHT runs unfinished at a time.
        await waitFor(() => unfinished < IN_FLIGHT, 60_000, 5);
      }
    };
    await Promise.all(Array.from({ length: 8 }, sender)).finally(() => clearInterval(counter));
    const allDone = () => triggers.every((t) => (tally.get(t.id)?.done ?? 0) >= 1);
    await waitFor(allDone, 60_000, 50).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1_500)); // late repeats surface here
    const ms = Date.now() - started;
    direct.disconnect();

    const missed = triggers.filter((t) => (tally.get(t.id)?.done ?? 0) === 0);
    const repeated = triggers.filter((t) => (tally.get(t.id)?.woke ?? 0) > 1 || (tally.get(t.id)?.done ?? 0) > 1);
    const wrong = triggers.filter((t) => {
      const e = tally.get(t.id);
      return e && e.done >= 1 && e.got[0] !== replies.get(t.conv);
    });
    const steps = triggers.filter((t) => (tally.get(t.id)?.step ?? 0) !== 1);
    const parkedRuns = triggers.filter((t) => (tally.get(t.id)?.attempt ?? 0) >= 2).length;
    // Fresh notes in the sandbox, per run.
    const notes = await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` });
    const fresh = new Map<string, number>();
    for (const n of notes) {
      if (n.status !== 201 || n.replay) continue;
      const id = (n.body as { body: string }).body.split(' ')[1] as string;
      fresh.set(id, (fresh.get(id) ?? 0) + 1);
    }
    const writeProblems = triggers.filter((t) => (fresh.get(t.id) ?? 0) !== 1).map((t) => `${t.id}: ${fresh.get(t.id) ?? 0} writes`);
    console.log(
      `[wait-race] pipeline: ${ROUNDS} runs in ${(ms / 1000).toFixed(1)} s; modes ${JSON.stringify(modes)}; answered at registration ${ROUNDS - parkedRuns}, parked and woken ${parkedRuns}; promotions refused (job still active) ${promoteRefused}; missed ${missed.length}, repeated ${repeated.length}, wrong reply ${wrong.length}, step not once ${steps.length}`,
    );

    expect(missed.map((t) => t.id).slice(0, 10)).toEqual([]);
    expect(repeated.map((t) => `${t.id} ${JSON.stringify(tally.get(t.id))}`).slice(0, 10)).toEqual([]);
    expect(wrong.map((t) => t.id).slice(0, 10)).toEqual([]);
    expect(steps.map((t) => t.id).slice(0, 10)).toEqual([]);
    expect(writeProblems.slice(0, 10)).toEqual([]);
    expect(notes.length).toBe(ROUNDS); // and no replays either: each write was sent once
    // Nothing lost or left behind: every run completed, none failed, no parked run, no wait or wake-up kept.
    expect(await handlerJobCounts(p, 'completed', 'failed', 'delayed', 'active', 'waiting')).toEqual({
      completed: ROUNDS,
      failed: 0,
      delayed: 0,
      active: 0,
      waiting: 0,
    });
    expect(await new RunRecords(p.redis, p.prefix).parked()).toEqual([]);
    // No wait is left pending, nor any wait of a completed run (those answered at registration included).
    const left = Object.entries(await p.redis.hgetall(`${p.prefix}:wait:state`)).map(([id, raw]) => ({
      id,
      s: (JSON.parse(raw) as { s: string }).s,
    }));
    expect(left.filter((w) => w.s === 'pending')).toEqual([]);
    expect(left).toEqual([]);
    expect(await p.redis.zcard(`${p.prefix}:wait:wake`)).toBe(0);
    expect(await p.redis.zcard(`${p.prefix}:${EVENTS_QUEUE}:failed`)).toBe(0);
    // Both paths were raced, and some answers came while the job was still active (their promotion refused:
    // the job's own re-read after moveToDelayed, src/worker/job-moves.ts `applyDecision`, woke it).
    expect(parkedRuns).toBeGreaterThan(0);
    expect(promoteRefused).toBeGreaterThan(0);
    expect(ROUNDS - parkedRuns).toBeGreaterThan(0);
  }, 300_000);

  it('a wait answered at its registration (the reply already fanned out: lookback) is forgotten once its run completes', async () => {
    const tally = g.__syWfr as Tally;
    const c = 6_000_001;
    let replyId = '';
    g.__syWfrHook = async (event) => {
      if (replyId !== '') return;
      const body = messageBody('message.received', event.data.id, 'early');
      replyId = deliveryId(body);
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
      await waitFor(async () => (await p.events.getJob(jobIdFor(replyId)))?.finishedOn !== undefined, 10_000, 10);
    };
    const body = conversationBody('conversation.created', c, 'lookback');
    const id = deliveryId(body);
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    await waitFor(() => (tally.get(id)?.done ?? 0) >= 1, 10_000);
    // Answered at registration: one attempt, never parked; then completed.
    expect(tally.get(id)).toMatchObject({ attempt: 1, woke: 1, done: 1, got: [replyId] });
    // Its job completed (the processor forgets the run's waits before it returns, so before this).
    await waitFor(async () => (await p.handlers.getJob(jobIdFor(id, 'wfr-racer')))?.finishedOn !== undefined, 10_000, 10);
    // The run is over, so its wait is forgotten (processor.ts), as a parked run's are: nothing of it, the
    // reply's body included, is left in the hash (which has no expiry).
    const wait = `${jobIdFor(id, 'wfr-racer')}:w:reply`;
    expect(await p.redis.hget(`${p.prefix}:wait:state`, wait)).toBeNull();
  });
});
