import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageBody, conversationBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';

const PRIORITY = fileURLToPath(new URL('../../support/handlers/priority', import.meta.url));

/**
 * Burst 3 per 10 s, 2 worker slots per level. Eight low runs fill the window
 * and then wait on the limiter in both low slots; a high run arriving then has
 * its own slot and takes the next free API slot, before every low run still
 * waiting.
 */
describe('priority on the shared API budget', () => {
  let p: Pipeline;
  let conv: number;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: PRIORITY, burst: 3, env: { WORKER_CONCURRENCY: '2' } });
    conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    // That read counted against the burst: start the test with an empty window.
    await fetch(`${p.api.url}/_sandbox/burst`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ burst: 3 }),
    });
  });
  afterAll(async () => p?.close());

  const notes = async () =>
    (await p.requests({ method: 'POST', path: `/conversations/${conv}/notes` }))
      .filter((r) => r.status === 201)
      .map((r) => (r.body as { body: string }).body.split(' ')[0]);

  it('a high run completes while low runs occupy every worker slot waiting on the limiter', async () => {
    for (let i = 0; i < 8; i++)
      expect((await deliver(p.receiverUrl, conversationBody('conversation.closed', conv, `bulk ${i}`))).status).toBe(202);
    // The window is full (3 low notes; the workers' limiter paces low to one per 10 s / 3 after the first
    // ones, so this takes about 7 s) and both low slots hold runs waiting for it.
    await waitFor(async () => (await notes()).length >= 3, 30_000, 100);
    await waitFor(async () => (await p.handlerQueues.low.getActiveCount()) === 2);
    const before = (await notes()).length;
    expect(before).toBeLessThanOrEqual(5);
    expect((await deliver(p.receiverUrl, messageBody('message.received', conv, 'help!'))).status).toBe(202);
    await waitFor(async () => (await notes()).includes('urgent'), 40_000, 100);
    const order = await notes();
    // The high note goes out as soon as the window has room again: among the writes of the slots that freed
    // at that moment (two: the first two low notes were sent together), ahead of every low run still waiting.
    // As low, it would be the 9th write, after all eight.
    expect(order.slice(0, before)).toEqual(Array<string>(before).fill('bulk'));
    expect(order.indexOf('urgent')).toBeLessThanOrEqual(before + 1);
  }, 90_000);
});
