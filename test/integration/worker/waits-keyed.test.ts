import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { conversationBody, deliveryId, messageBody } from '../../support/events.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';
import { jobIdFor } from '../../../src/events/envelope.js';

const DIR = fileURLToPath(new URL('../../support/handlers/workflow-calls', import.meta.url));
type Entry = Record<string, unknown> & { h: string };
const g = globalThis as { __syWf?: Entry[] };
const starts = (conv: number) => (g.__syWf ?? []).filter((e) => e.h === 'where' && e['at'] === 'start' && e['conv'] === conv).length;
const done = (conv: number) => (g.__syWf ?? []).find((e) => e.h === 'where' && e['at'] === 'done' && e['conv'] === conv);

/**
 * A wait matched by `{ on: 'conversation', where }` (issue 32 item 4), in the real worker: it waits under its
 * conversation's key, so an event of another conversation never wakes it (not even one `where` would take);
 * an event of its conversation that `where` refuses is passed over (the run parks again); the one it takes
 * resumes the run. The deprecated bare key function is still honoured, at the price of being woken by every
 * event of the name.
 */
describe('a keyed where match in the worker', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: DIR, env: { HISTORY: 'off' }, only: ['wf-where'] });
  });
  afterAll(async () => p?.close());
  beforeEach(() => {
    g.__syWf = [];
  });

  /** Delivers `body` and waits until its fan-out (the `events` job) is done. */
  async function fanned(body: string): Promise<void> {
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const id = deliveryId(body);
    await waitFor(async () => (await p.events.getJob(jobIdFor(id)))?.isCompleted(), 10_000);
  }

  /** Starts a run of conversation `conv` and waits until it is parked; whether it is still parked, untouched. */
  async function parkedRun(conv: number, subject: string | null): Promise<() => Promise<boolean>> {
    const body = conversationBody('conversation.closed', conv, subject);
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const jobId = jobIdFor(deliveryId(body), 'wf-where');
    const parked = async () => Boolean(await (await p.handlers.getJob(jobId))?.isDelayed());
    await waitFor(parked, 10_000);
    return parked;
  }

  it("only its conversation's events wake it; where decides among them", async () => {
    const conv = 38_001;
    const parked = await parkedRun(conv, null);
    expect(starts(conv)).toBe(1);
    // Another conversation's `done`: under another key, never looked at (a wake-up is made by the fan-out
    // itself, before its job completes: the run would no longer be parked, or would have run again).
    await fanned(messageBody('message.sent', 88_001, 'done'));
    expect(await parked()).toBe(true);
    expect(starts(conv)).toBe(1);
    // Its own conversation's message that `where` refuses: woken once, passed over, parked again.
    await fanned(messageBody('message.sent', conv, 'not yet'));
    await waitFor(() => starts(conv) === 2, 10_000);
    await fanned(messageBody('message.sent', conv, 'done'));
    await waitFor(() => done(conv), 10_000);
    expect(done(conv)?.['got']).toBe('done');
    // start, the pass-over, the resume: the other conversation's event woke nothing.
    expect(starts(conv)).toBe(3);
  }, 40_000);

  it("the deprecated bare key function still matches, woken by other conversations' events too", async () => {
    const conv = 38_002;
    await parkedRun(conv, 'legacy');
    // The worker says once that the form is deprecated and what to write instead.
    expect(p.lines.filter((l) => l.includes('matches with a bare key function (deprecated)'))).toEqual([
      expect.stringContaining(`write match: { on: 'conversation' | 'contact', where: (event) => boolean }`),
    ]);
    await fanned(messageBody('message.sent', 88_002, 'done'));
    await waitFor(() => starts(conv) === 2, 10_000);
    await fanned(messageBody('message.sent', conv, 'done'));
    await waitFor(() => done(conv), 10_000);
    expect(done(conv)?.['got']).toBe('done');
  }, 40_000);

  it("cancelOn with a keyed where: only its conversation's event that where takes cancels it", async () => {
    const conv = 38_003;
    const body = conversationBody('conversation.closed', conv, null);
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const jobId = jobIdFor(deliveryId(body), 'wf-where');
    await waitFor(async () => (await p.handlers.getJob(jobId))?.isDelayed(), 10_000);
    await fanned(conversationBody('conversation.opened', 88_003, 'stop'));
    await fanned(conversationBody('conversation.opened', conv, 'keep'));
    expect(await (await p.handlers.getJob(jobId))?.isDelayed()).toBe(true);
    const stop = conversationBody('conversation.opened', conv, 'stop');
    await fanned(stop);
    const result = await waitFor(async () => (await p.handlers.getJob(jobId))?.returnvalue as { cancelled?: string } | undefined, 10_000);
    expect(result?.cancelled).toBe(deliveryId(stop));
    expect(done(conv)).toBeUndefined();
  }, 40_000);
});
