/**
 * `switchyard waits cancel` and `waits wake` called as functions on a real
 * pipeline's Redis: the confirmation of a bulk cancel on a terminal (yes, no),
 * its refusal without one, references naming none or several runs, --json.
 */
import { userInfo } from 'node:os';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitsCommand } from '../../../src/cli/waits.js';
import { conversationBody, deliveryId, eventBody } from '../../support/events.js';
import { memoryIo } from '../../support/io.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';
import { readTrace } from '../../../src/history/read.js';
import type { OpsEntry } from '../../support/handlers/waits-ops/tally.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/waits-ops', import.meta.url));
const g = globalThis as { __syOps?: Map<string, OpsEntry> };

describe('switchyard waits cancel | wake', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  let conv = 600;
  /** Runs the command; `answer`: what is typed on a terminal (stdin a TTY), else stdin is no terminal. */
  const waits = async (argv: string[], answer?: string) => {
    const io = memoryIo(env, { input: answer ?? '' });
    if (answer !== undefined) Object.assign(io.stdin as Readable, { isTTY: true });
    const code = await waitsCommand.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };
  const count = () => new RunRecords(p.redis, p.prefix).count();
  const parkRuns = async (body: string, runs: number): Promise<string> => {
    const before = await count();
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    await waitFor(async () => (await count()) === before + runs, 20_000, 20);
    return deliveryId(body);
  };
  const park = (event: string) => parkRuns(conversationBody(event, ++conv, null), 1);

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
  });
  afterAll(async () => p?.close());

  it('many: lists how many and which, asks on a terminal; "n" cancels nothing, "y" cancels them', async () => {
    const keys = [await park('conversation.opened'), await park('conversation.opened')];
    const no = await waits(['cancel', '--handler', 'ops-sleeper'], 'n\n');
    expect(no.code).toBe(1);
    expect(no.out).toMatch(/^2 parked runs match:\nDUE\s+HANDLER\s+KIND\s+NAME\s+WAITING FOR\s+DELIVERY\n/);
    for (const k of keys) expect(no.out).toContain(k);
    expect(no.err).toBe('Cancel these 2? [y/N] Nothing cancelled.\n');
    expect(await count()).toBe(2);
    const yes = await waits(['cancel', '--handler', 'ops-sleeper', '--actor', 'ops-team'], 'y\n');
    expect(yes.code).toBe(0);
    expect(yes.out).toMatch(
      /\ncancelled ops-sleeper in sleep nap, delivery evt_\w+\ncancelled ops-sleeper in sleep nap, delivery evt_\w+\n2 of 2 runs cancelled by ops-team\.\n$/,
    );
    expect(await count()).toBe(0);
  });

  it('many without a terminal: refused (exit 2) unless --yes; the list still printed', async () => {
    await park('conversation.opened');
    const refused = await waits(['cancel', '--kind', 'sleep']);
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(/^1 parked run matches:\n/);
    expect(refused.err).toBe('refusing to cancel 1 parked run without confirmation: stdin is not a terminal; add --yes to cancel them\n');
    expect(await count()).toBe(1);
    const json = await waits(['cancel', '--kind', 'sleep', '--yes', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({ results: [{ handler: 'ops-sleeper', name: 'nap', status: 'cancelled' }] });
    expect(json.err).toMatch(/^1 parked run matches:\n/);
    expect((await waits(['cancel', '--handler', 'nobody'])).out).toBe('No parked run matches: nothing to cancel.\n');
  });

  it("--where selects by the run's own event (from its job): listed, then only those cancelled; a bad path says what to write", async () => {
    const a = await park('conversation.opened');
    const b = await park('conversation.opened');
    // The history's fan-out entry is written in the background (batched): wait for it, not only for the run.
    const convOf = (key: string) => waitFor(async () => (await readTrace(p.redis, p.prefix, key))?.conversation, 10_000, 20);
    const listed = await waits(['--where', `data.id=${await convOf(b)}`, '--json']);
    expect((JSON.parse(listed.out) as { waits: { deliveryKey: string }[] }).waits.map((w) => w.deliveryKey)).toEqual([b]);
    const done = await waits([
      'cancel',
      '--handler',
      'ops-sleeper',
      '--where',
      `data.id=${await convOf(b)}`,
      '--where',
      'data.status=open',
      '--yes',
    ]);
    expect(done.code).toBe(0);
    expect(done.out).toMatch(
      new RegExp(`^1 parked run matches:\n[^]*\ncancelled ops-sleeper in sleep nap, delivery ${b}\n1 of 1 run cancelled by `),
    );
    await expect(waits(['cancel', '--where', 'data.conversationid=5'])).rejects.toThrow(
      /--where "data.conversationid=5": no event of the catalogue has a field "data.conversationid"; did you mean data.conversation_id/,
    );
    await expect(waits(['cancel', a, '--where', 'data.id=1'])).rejects.toThrow(
      '--kind, --due-within and --where select runs: give them without <run>',
    );
    expect((await waits(['cancel', a])).code).toBe(0);
  });

  it('one run: by delivery key or job id; the OS user is who did it, with the reason given', async () => {
    const key = await park('conversation.opened');
    const unknown = await waits(['cancel', 'evt_nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^no parked run is named "evt_nope": give the delivery key/);
    expect((await waits(['cancel', key, '--handler', 'ops-waiter'])).code).toBe(1);
    await expect(waits(['cancel', key, '--kind', 'sleep'])).rejects.toThrow(
      '--kind, --due-within and --where select runs: give them without <run>',
    );
    await expect(waits(['cancel'])).rejects.toThrow(/name a run .* or select runs with --handler, --kind, --due-within or --where/);
    const done = await waits(['cancel', key, '--reason', 'stuck since 1.4.2']);
    expect(done.code).toBe(0);
    expect(done.out).toBe(`cancelled ops-sleeper in sleep nap, delivery ${key}\n1 of 1 run cancelled by ${userInfo().username}.\n`);
    const trace = await readTrace(p.redis, p.prefix, key);
    expect(trace?.entries.find((e) => e.kind === 'operator')).toMatchObject({
      action: 'cancel',
      by: userInfo().username,
      via: 'cli',
      reason: 'stuck since 1.4.2',
    });
  });

  it('wake: a wait returns null now, once; a second wake finds it gone', async () => {
    const key = await park('conversation.assigned');
    const woke = await waits(['wake', key, '--actor', 'ops-team']);
    expect(woke).toMatchObject({ code: 0, out: `woken: its wait returns null now: ops-waiter in wait reply, delivery ${key}\n` });
    await waitFor(async () => g.__syOps?.get(key)?.after === 1, 20_000, 20);
    expect(g.__syOps?.get(key)?.got).toEqual(['null']);
    const again = await waits(['wake', key]);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/^no parked run is named/);
    await expect(waits(['wake'])).rejects.toThrow(/wake takes one run/);
  });

  it('a delivery two handlers park runs of: its key alone is ambiguous and says how to narrow it', async () => {
    const id = await parkRuns(eventBody('lead.created', { id: 5, contact_id: 7, name: 'Roof repair' }), 2);
    await expect(waits(['wake', id])).rejects.toThrow(
      `"${id}" names 2 parked runs (handlers ops-twin-a, ops-twin-b): add --handler ID, or give the job id (d/${id}/ops-twin-a)`,
    );
    expect((await waits(['wake', `d/${id}/ops-twin-b`])).out).toBe(
      `woken: its sleep ends now: ops-twin-b in sleep settle, delivery ${id}\n`,
    );
    expect((await waits(['cancel', id, '--handler', 'ops-twin-a'])).code).toBe(0);
    await waitFor(async () => (await count()) === 0, 20_000, 20);
  });
});
