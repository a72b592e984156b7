/**
 * A worker starting where runs are parked for a handler that no module of its
 * HANDLERS_DIR defines any more (removed or renamed): it warns once per such
 * handler, with how many runs and the command that cancels them; runs of the
 * handlers it defines are not named.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationBody } from '../../support/events.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, memoryLogger, testConfig, waitFor } from '../../support/service.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';
import { loadHandlerDir } from '../../../src/handler/loader.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import { workerStarted } from '../../../src/runtime/orphaned-runs.js';

const OPS = fileURLToPath(new URL('../../support/handlers/waits-ops', import.meta.url));
const OTHERS = fileURLToPath(new URL('../../support/handlers/waits-cli', import.meta.url));

describe('start-up: runs parked for handlers no longer defined', () => {
  let first: Pipeline;
  let firstOpen = true;
  let later: Pipeline | undefined;
  beforeAll(async () => {
    first = await startPipeline({ handlersDir: OPS });
  });
  afterAll(async () => {
    await later?.close();
    if (firstOpen) await first?.close();
  });

  it('warns per handler with the count and `switchyard waits cancel --handler <id> --yes`', async () => {
    for (const conv of [1, 2])
      expect((await deliver(first.receiverUrl, conversationBody('conversation.opened', conv, null))).status).toBe(202);
    const assigned = conversationBody('conversation.assigned', 3, null);
    expect((await deliver(first.receiverUrl, assigned)).status).toBe(202);
    await waitFor(async () => (await new RunRecords(first.redis, first.prefix).count()) === 3, 20_000, 20);
    await first.close();
    firstOpen = false;
    // The handlers' directory no longer has them: a worker of another directory on the same Redis and prefix.
    later = await startPipeline({ handlersDir: OTHERS, env: { QUEUE_PREFIX: first.prefix } });
    const warned = () => later!.lines.filter((l) => l.includes('which no module in HANDLERS_DIR defines'));
    await waitFor(async () => warned().length === 2, 10_000, 20);
    const lines = warned().map((l) => JSON.parse(l) as { level: number; handler: string; runs: number; command: string; msg: string });
    expect(lines.map((l) => [l.handler, l.runs, l.command]).sort()).toEqual([
      ['ops-sleeper', 2, 'switchyard waits cancel --handler ops-sleeper --yes'],
      ['ops-waiter', 1, 'switchyard waits cancel --handler ops-waiter --yes'],
    ]);
    expect(lines.find((l) => l.handler === 'ops-waiter')?.msg).toBe(
      '1 run is parked for handler "ops-waiter", which no module in HANDLERS_DIR defines: nothing will run it; ' +
        'cancel it with: switchyard waits cancel --handler ops-waiter --yes',
    );
  });

  it('warns again when a reload (switchyard dev) removes a handler whose runs are parked', async () => {
    const snapshotOf = async (dir: string) =>
      handlerSnapshot(
        (await loadHandlerDir(dir)).handlers.map((l) => l.handler),
        undefined,
        {},
      );
    const set = new HandlerSet(await snapshotOf(OPS));
    const { log, lines } = memoryLogger();
    const warned = () => lines.filter((l) => l.includes('which no module in HANDLERS_DIR defines'));
    const stop = workerStarted(set, testConfig({ QUEUE_PREFIX: first.prefix }), later!.redis, log);
    try {
      expect(lines.some((l) => l.includes('worker started'))).toBe(true);
      set.replace(await snapshotOf(OPS)); // nothing removed: nothing to say
      set.replace(await snapshotOf(OTHERS)); // ops-sleeper and ops-waiter removed, their runs still parked
      await waitFor(async () => warned().length === 2, 10_000, 20);
      expect(
        warned()
          .map((l) => (JSON.parse(l) as { handler: string }).handler)
          .sort(),
      ).toEqual(['ops-sleeper', 'ops-waiter']);
    } finally {
      stop();
    }
    set.replace(await snapshotOf(OPS));
    set.replace(await snapshotOf(OTHERS));
    await new Promise((r) => setTimeout(r, 200));
    expect(warned()).toHaveLength(2); // stopped: no more warnings
  });
});
