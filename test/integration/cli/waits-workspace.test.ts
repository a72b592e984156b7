/**
 * `switchyard waits`, `waits cancel` and `waits wake` with `--workspace` on a deployment of two workspaces served
 * by one service: the same conversation's run parked in each, and each command acts in the workspace it names only.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitsCommand } from '../../../src/cli/waits.js';
import { conversationBody, deliveryId } from '../../support/events.js';
import { memoryIo } from '../../support/io.js';
import { testRedisUrl } from '../../support/redis.js';
import { waitFor } from '../../support/service.js';
import { startTwoWorkspaces, type TwoWorkspaces } from '../../support/workspaces.js';

describe('switchyard waits --workspace', () => {
  let w: TwoWorkspaces;
  let env: Record<string, string>;
  const waits = async (...argv: string[]) => {
    const io = memoryIo(env);
    const code = await waitsCommand.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };
  /** The delivery keys of the runs parked in a workspace, as `waits --json` lists them. */
  const parkedIn = async (ws: string): Promise<string[]> => {
    const r = await waits('--workspace', ws, '--json');
    expect(r.code).toBe(0);
    return (JSON.parse(r.out) as { waits: { deliveryKey: string }[] }).waits.map((e) => e.deliveryKey).sort();
  };

  beforeAll(async () => {
    w = await startTwoWorkspaces();
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: w.prefix, WORKSPACES_FILE: join(w.dir, 'workspaces.json') };
  });
  afterAll(async () => w?.close());

  it('lists, cancels and wakes the runs of the named workspace only', async () => {
    const conv = 9_101;
    const [a1, a2, b1] = [
      conversationBody('conversation.closed', conv, null),
      conversationBody('conversation.closed', conv + 1, null),
      conversationBody('conversation.closed', conv, null),
    ];
    for (const [ws, body] of [
      ['acme', a1],
      ['acme', a2],
      ['other', b1],
    ] as const)
      expect((await w.deliver(ws, body)).status).toBe(202);
    await waitFor(async () => (await parkedIn('acme')).length === 2 && (await parkedIn('other')).length === 1, 20_000);
    expect(await parkedIn('acme')).toEqual([deliveryId(a1), deliveryId(a2)].sort());
    expect(await parkedIn('other')).toEqual([deliveryId(b1)]);

    // Cancel every ws-reply run in other: acme's two stay parked.
    const cancelled = await waits('cancel', '--workspace', 'other', '--handler', 'ws-reply', '--yes');
    expect(cancelled.code).toBe(0);
    expect(cancelled.out).toMatch(/1 of 1 runs? cancelled/);
    expect(await parkedIn('other')).toEqual([]);
    expect(await parkedIn('acme')).toEqual([deliveryId(a1), deliveryId(a2)].sort());

    // A run of acme named in other's workspace is not found there; woken in acme, its wait returns null.
    expect((await waits('wake', '--workspace', 'other', deliveryId(a1))).code).not.toBe(0);
    expect((await waits('wake', '--workspace', 'acme', deliveryId(a1))).code).toBe(0);
    await waitFor(async () => (await w.written('acme')).includes(`reply ${conv} none`), 20_000);
    expect(await parkedIn('acme')).toEqual([deliveryId(a2)]);
    expect((await w.written('other')).filter((n) => n.startsWith('reply '))).toEqual([]);
  }, 60_000);
});
