/**
 * The first wait ever for an event name in a Redis: deliveries of a name are kept for lookbacks once
 * it is watched. A handler that declares the name in `waitsFor` has it watched from start-up, so a
 * reply that arrives while its first run lingers (before the wait begins) answers the wait; without
 * the declaration that first wait looks back only from when it began (documented), and times out.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { conversationBody, messageBody } from '../../support/events.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';

const DIR = fileURLToPath(new URL('../../support/handlers/workflow-first', import.meta.url));
type Entry = Record<string, unknown> & { h: string };
const g = globalThis as { __syWf?: Entry[] };
const entry = (h: string, at: string) => (g.__syWf ?? []).find((e) => e.h === h && e.at === at);

describe('the first wait for an event name (a fresh Redis prefix: nothing watched yet)', () => {
  let p: Pipeline | undefined;
  beforeEach(() => {
    g.__syWf = [];
  });
  afterEach(async () => {
    await p?.close();
    p = undefined;
  });

  async function firstRun(only: string, h: string): Promise<unknown> {
    p = await startPipeline({ handlersDir: DIR, only: [only], env: { HISTORY: 'off' } });
    expect((await deliver(p.receiverUrl, conversationBody('conversation.closed', 71_001, 'first'))).status).toBe(202);
    await waitFor(() => entry(h, 'start') !== undefined, 10_000);
    // While the run lingers, before its wait begins: the agent's reply.
    expect((await deliver(p.receiverUrl, messageBody('message.sent', 71_001, 'early agent reply'))).status).toBe(202);
    await waitFor(() => entry(h, 'done') !== undefined, 10_000);
    return entry(h, 'done')?.['got'];
  }

  it('declared in waitsFor: the reply received before the wait began answers it', async () => {
    expect(await firstRun('wf-first-waiter', 'declared')).toBe('early agent reply');
  }, 20_000);

  it('not declared: that first wait looks back only from when it began, and times out', async () => {
    expect(await firstRun('wf-first-waiter-undeclared', 'undeclared')).toBeNull();
  }, 20_000);
});
