/**
 * `switchyard rerun` as a function against a pipeline (receiver, worker, sandbox, shared Redis): the plan
 * and its refusals, the confirmation, a batch followed to its end, status and cancel, Ctrl-C leaving the
 * batch running, and one delivery with --from-step and --set.
 */
import { fileURLToPath } from 'node:url';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/command.js';
import { rerunCommand } from '../../../src/cli/rerun.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { rerunStatus } from '../../../src/rerun/batch.js';
import { messageBody } from '../../support/events.js';
import { memoryIo } from '../../support/io.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { deliver } from '../../support/service.js';
import { waitFor } from '../../support/wait.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/rerun-batch', import.meta.url));
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;
const BATCH = /started (rr-[0-9a-z]+-[0-9a-f]{4})/;

describe('switchyard rerun', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  const keys: string[] = [];

  const run = async (argv: string[], opts: { input?: string; tty?: boolean; signal?: AbortSignal } = {}) => {
    const io = memoryIo(env, opts.input === undefined ? {} : { input: opts.input });
    if (opts.tty) Object.assign(io.stdin, { isTTY: true });
    const code = await rerunCommand.run(argv, opts.signal ? { ...io, stopSignal: opts.signal } : io);
    return { code, out: io.out(), err: io.err() };
  };
  const lowJobs = async () =>
    (await p.handlerQueues.low.getJobs(['completed', 'waiting', 'active', 'delayed', 'prioritized', 'failed'])) as Job<HandlerJobData>[];

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix, HANDLERS_DIR: HANDLERS, WORKSPACE_API_BURST: '30', RERUN_SHARE: '0.5' };
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    for (let i = 0; i < 4; i++) {
      const body = messageBody('message.received', conv, `order ${i}`);
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
      keys.push(keyOf(body));
    }
    await waitFor(
      async () => {
        const r = await run(['--handler', 'rerun-note', '--dry-run', '--json']);
        return (JSON.parse(r.out) as { items: number }).items === 4;
      },
      20_000,
      100,
    );
  });
  afterAll(async () => p?.close());

  it('--dry-run prints the plan: deliveries per event, the calls of the original runs, the time at RERUN_SHARE', async () => {
    const r = await run(['--handler', 'rerun-note', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('rerun plan: handler rerun-note, 4 deliveries to run again as new runs');
    expect(r.out).toMatch(/message\.received\s+4 deliveries\s+4 API calls/);
    expect(r.out).toContain('RERUN_SHARE 0.5 of WORKSPACE_API_BURST 30 = 15 calls per 10 s');
    expect(r.out).toContain('about 2.7s at that share');
    expect(r.out).not.toContain('started');
  });

  it('--where selects by the kept body, as deliveries --where does', async () => {
    const r = await run(['--handler', 'rerun-note', '--where', 'data.body~order 2', '--dry-run', '--json']);
    expect((JSON.parse(r.out) as { items: number }).items).toBe(1);
    const text = await run(['--handler', 'rerun-note', '--where', 'data.body~order 2', '--dry-run']);
    expect(text.out).toContain("rerun plan: handler rerun-note, 1 deliveries to run again as new runs (--where 'data.body~order 2')");
    await expect(run(['--handler', 'rerun-note', '--where', 'data.bdy~x', '--dry-run'])).rejects.toThrow(/data\.bdy/);
  });

  it('refuses without a terminal and without --yes, an unknown handler, an event the handler does not handle', async () => {
    await expect(run(['--handler', 'rerun-note'])).rejects.toThrow(
      /refusing to start a rerun without confirmation: stdin is not a terminal; pass --yes/,
    );
    await expect(run(['--handler', 'rerun-not', '--dry-run'])).rejects.toThrow(
      /no handler "rerun-not" in this project; did you mean "rerun-note"/,
    );
    const wrong = run(['--handler', 'rerun-note', '--event', 'lead.won', '--dry-run']);
    await expect(wrong).rejects.toThrow(UsageError);
    await expect(wrong).rejects.toThrow(/does not handle lead.won; it is subscribed to message.received/);
    await expect(run(['--dry-run'])).rejects.toThrow(/--handler ID is required/);
  });

  it('on a terminal it asks: "n" starts nothing', async () => {
    const r = await run(['--handler', 'rerun-note'], { input: 'n\n', tty: true });
    expect(r.out).toContain('not started');
    expect((await lowJobs()).length).toBe(0);
  });

  it('--yes starts a batch and follows it to its end; status lists and shows it', async () => {
    const r = await run(['--handler', 'rerun-note', '--yes']);
    expect(r.code).toBe(0);
    const batch = BATCH.exec(r.out)?.[1] as string;
    expect(r.out).toContain(`switchyard rerun status ${batch}`);
    expect(r.out).toMatch(new RegExp(`${batch}: 4 done, 0 failed of 4 .*: done`));
    const mine = (await lowJobs()).filter((j) => j.data.rerun?.batch === batch);
    expect(mine.map((j) => j.data.key).sort()).toEqual([...keys].sort());
    const list = await run(['status']);
    expect(list.out).toMatch(new RegExp(`${batch}\\s+rerun-note\\s+done\\s+4/0/4`));
    const one = await run(['status', batch]);
    expect(one.out).toContain(`batch     ${batch}`);
    expect(one.out).toContain('state     done');
    expect(one.out).toContain('progress  4 done, 0 failed of 4');
  });

  it('"y" on a terminal starts it; Ctrl-C stops following and leaves the batch running; cancel removes what did not start', async () => {
    await p.handlerQueues.low.pause();
    const before = await p.redis.zrange(`${p.prefix}:rerun:batches`, '0', '-1');
    try {
      const stop = new AbortController();
      const pending = run(['--handler', 'rerun-note'], { input: 'y\n', tty: true, signal: stop.signal });
      const batch = await waitFor(
        async () => (await p.redis.zrange(`${p.prefix}:rerun:batches`, '0', '-1')).find((b) => !before.includes(b)),
        10_000,
        50,
      );
      await waitFor(async () => (await rerunStatus({ redis: p.redis, prefix: p.prefix }, batch)).fed === 4, 10_000, 50);
      stop.abort();
      const r = await pending;
      expect(r.code).toBe(0);
      expect(r.err).toContain(`stopped following ${batch}: the batch goes on in the workers`);
      expect(r.err).toContain(`switchyard rerun cancel ${batch}`);
      expect((await rerunStatus({ redis: p.redis, prefix: p.prefix }, batch)).state).toBe('running');
      const c = await run(['cancel', batch]);
      expect(c.out).toContain(`cancelled ${batch}: 4 runs removed before they started, 0 never queued; 0 ran (done), 0 failed`);
      expect((await lowJobs()).filter((j) => j.data.rerun?.batch === batch)).toEqual([]);
      expect((await run(['cancel', batch])).out).toContain(`${batch} was cancelled already: nothing cancelled`);
    } finally {
      await p.handlerQueues.low.resume();
    }
    await expect(run(['cancel', 'rr-nope-0000'])).rejects.toThrow(/no rerun batch "rr-nope-0000"/);
    await expect(run(['status', 'nope'])).rejects.toThrow(/"nope" is not a rerun batch id/);
  });

  it("one delivery --from-step --set: a re-run with fromStep and the edited event; an unknown step is named with the run's steps", async () => {
    const key = keys[0] as string;
    await expect(run([key, '--handler', 'rerun-note', '--from-step', 'notes'])).rejects.toThrow(
      /--from-step "notes": the run of "rerun-note" on ".*" has no step of that name \(its steps: conversation, note\)/,
    );
    await expect(run([key, '--handler', 'rerun-note', '--set', 'data.body=42'])).rejects.toThrow(
      /the event would be not a valid event \(invalid_data\)/,
    );
    const r = await run([key, '--handler', 'rerun-note', '--from-step', 'note', '--set', 'data.body=fixed text']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      new RegExp(`rerun r1-\\S+: rerun-note on ${key} from step "note", event edited \\(data.body\\), a new run of d/${key}/rerun-note`),
    );
    expect(r.out).toContain(`completed\n  see it: switchyard trace ${key}`);
    const job = (await lowJobs()).find((j) => j.data.rerun?.fromStep === 'note');
    expect(job?.data).toMatchObject({
      key,
      handlerId: 'rerun-note',
      rerun: { of: `d/${key}/rerun-note`, fromStep: 'note' },
      event: { data: { body: 'fixed text' } },
    });
    // The note step ran fresh on the edited event: a new note says so.
    const notes = (await p.requests({ method: 'POST' })).filter((q) => q.status === 201 && !q.replay);
    expect(notes.map((q) => (q.body as { body: string }).body)).toContain('seen: fixed text');
    expect(job?.data.rerun?.batch).toBeUndefined();
  });
});
