import { fileURLToPath } from 'node:url';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqCommand, shortReason } from '../../../src/cli/dlq.js';
import { HANDLERS_QUEUE } from '../../../src/queue/names.js';
import type { DeadEntry } from '../../../src/queue/dlq.js';
import { buildDelivery } from '../../../src/replay/index.js';
import { pauseHandlers } from '../../../src/queue/pause.js';
import { match } from '../../support/match.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';
import { memoryIo } from '../../support/io.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/flaky', import.meta.url));
const flags = globalThis as { __syFlakyBroken?: boolean };

describe('dlq against real failed jobs', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  const keys: string[] = [];
  const run = async (...argv: string[]) => {
    const io = memoryIo(env);
    const code = await dlqCommand.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };
  const list = async (...argv: string[]) =>
    JSON.parse((await run('list', '--json', ...argv)).out) as { paused: boolean; entries: DeadEntry[] };

  beforeAll(async () => {
    flags.__syFlakyBroken = true;
    p = await startPipeline({ handlersDir: HANDLERS });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
    for (const id of [101, 102]) {
      const d = buildDelivery('lead.won', { sets: [`data.id=${id}`] });
      keys.push(d.key);
      expect((await deliver(p.receiverUrl, d.bytes)).status).toBe(202);
    }
    expect((await deliver(p.receiverUrl, '{"id":"evt_cut_off","event":"lead.won","da')).status).toBe(202);
    await waitFor(async () => (await p.handlers.getFailedCount()) === 2 && (await p.events.getFailedCount()) === 1);
  });
  afterAll(async () => {
    delete flags.__syFlakyBroken;
    await p?.close();
  });

  it('list shows both queues with event, handler and reason; filters narrow it', async () => {
    const all = await list();
    expect(all.paused).toBe(false);
    expect(all.entries).toHaveLength(3);
    expect(all.entries.filter((e) => e.queue === 'handlers').map((e) => e.handler)).toEqual(['flaky', 'flaky']);
    expect((await list('--queue', 'events')).entries[0]).toMatchObject({
      queue: 'events',
      key: match.stringMatching(/^sha256:/),
      reason: match.stringMatching(/^invalid_json/),
    });
    expect((await list('--handler', 'flaky')).entries).toHaveLength(2);
    expect((await list('--reason', 'BROKEN ON LEAD 101')).entries).toHaveLength(1);
    expect((await list('--event', 'lead.won', '--since', '1h')).entries.length).toBeGreaterThanOrEqual(2);
    expect((await list('--older-than', '1h')).entries).toHaveLength(0);
    expect((await list('--limit', '1')).entries).toHaveLength(1);
    const text = await run('list');
    expect(text.out).toMatch(/^ID\s+QUEUE\s+EVENT\s+HANDLER\s+AGE\s+TRIES\s+REASON/);
    expect(text.out).toMatch(/flaky .*broken on lead 10[12]/);
    expect(text.out).toMatch(/3 dead-lettered\n$/);
  });

  it('show prints the payload, the error and the attempts, by job id or by delivery key', async () => {
    const [entry] = (await list('--reason', 'lead 101')).entries;
    const byId = await run('show', entry!.id);
    expect(byId.code).toBe(0);
    expect(byId.out).toMatch(/handler: {3}flaky/);
    expect(byId.out).toMatch(/attempts: {2}1 of 10/);
    expect(byId.out).toMatch(/reason: {4}NonRetriableError: broken on lead 101/);
    expect(byId.out).toMatch(/"id": 101/);
    const byKey = await run('show', keys[0]!, '--json');
    expect(JSON.parse(byKey.out)).toHaveLength(1);
    const raw = await run('show', (await list('--queue', 'events')).entries[0]!.key);
    expect(raw.out).toContain('raw body:\n    {"id":"evt_cut_off","event":"lead.won","da');
    expect((await run('show', 'nothing-here')).code).toBe(1);
  });

  it('retry after the fix runs the handler jobs to success', async () => {
    flags.__syFlakyBroken = false;
    const r = await run('retry', '--handler', 'flaky');
    expect(r.out).toMatch(/2 jobs moved back to waiting/);
    await waitFor(async () => (await p.handlers.getCompletedCount()) === 2);
    expect((await list('--queue', 'handlers')).entries).toHaveLength(0);
  });

  it('purge needs a filter or --all, then deletes the matching jobs', async () => {
    await expect(run('purge')).rejects.toThrow(/--all/);
    expect((await run('purge', '--queue', 'events')).out).toBe('1 dead job deleted\n');
    expect((await list()).entries).toHaveLength(0);
  });

  it('resume unpauses a handlers queue paused for an auth error', async () => {
    await pauseHandlers(p.redis, p.handlerQueues, p.prefix, {
      reason: 'API token unusable (token_expired)',
      code: 'token_expired',
      at: new Date().toISOString(),
      tokenHash: null,
    });
    const before = await run('list');
    expect(before.out).toMatch(/handlers queue is PAUSED .*token_expired/);
    const r = await run('resume');
    expect(r.out).toMatch(/handlers queue resumed \(was paused since .*token_expired/);
    expect(await p.handlers.isPaused()).toBe(false);
    expect((await run('resume')).out).toBe('handlers queue was not paused\n');
  });

  it('bad usage is explained', async () => {
    await expect(run()).rejects.toThrow(/expected a subcommand/);
    await expect(run('lst')).rejects.toThrow(/unknown subcommand "lst"/);
    await expect(run('show')).rejects.toThrow(/one job id/);
    await expect(run('list', '--queue', 'x')).rejects.toThrow(/--queue: expected events, handlers-high, handlers, handlers-low/);
    await expect(run('list', '--older-than', 'old')).rejects.toThrow(/--older-than/);
  });
});

describe('dlq list: long reasons', () => {
  it('shortReason cuts at a word boundary with an ellipsis, never mid-word', () => {
    const words =
      'lifecycle stage "Platinum" does not exist in the workspace; set WON_STAGE to a stage id or exact name (see the recipe settings in the README)';
    const short = shortReason(words);
    expect(short.length).toBeLessThanOrEqual(120);
    expect(short).toMatch(/…$/);
    const kept = short.slice(0, -1);
    expect(words.startsWith(kept)).toBe(true);
    expect(words[kept.length]).toMatch(/[\s,;:.-]/);
    expect(shortReason('short reason')).toBe('short reason');
    expect(shortReason('first line\n    at stack (file.js:1:1)')).toBe('first line …');
    expect(shortReason('x'.repeat(300))).toBe(`${'x'.repeat(119)}…`);
  });

  it('shortReason keeps the last whole word when the cut lands exactly on a space', () => {
    // 16 characters fit before the ellipsis: "alpha beta gamma", then a space.
    expect(shortReason('alpha beta gamma delta epsilon', 17)).toBe('alpha beta gamma…');
    expect(shortReason('alpha beta gamma, delta epsilon', 18)).toBe('alpha beta gamma…');
    expect(shortReason('alpha beta gammas delta epsilon', 17)).toBe('alpha beta…');
  });

  it('the table shows a long reason of a real dead job cut at a word, and show prints it whole', async () => {
    const prefix = uniquePrefix('dlq-long');
    const env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix, SWITCHYARD_HOME: '/nonexistent' };
    const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    const handlers = new Queue(HANDLERS_QUEUE, { connection: redis, prefix });
    const reason = `ValidationError: ${'the contact field named in the request does not exist '.repeat(4)}(422)`;
    const worker = new Worker(
      HANDLERS_QUEUE,
      async () => {
        throw new UnrecoverableError(reason);
      },
      { connection: redis, prefix },
    );
    try {
      await handlers.add(
        'long',
        {
          key: 'evt_long',
          handlerId: 'long',
          receivedAt: new Date().toISOString(),
          event: { id: 'evt_long', name: 'lead.won', createdAt: null, data: {} },
        },
        { jobId: 'd/evt_long/long', attempts: 1 },
      );
      await waitFor(async () => (await handlers.getFailedCount()) === 1);
      const io = memoryIo(env);
      expect(await dlqCommand.run(['list'], io)).toBe(0);
      const row = io
        .out()
        .split('\n')
        .find((l) => l.startsWith('d/evt_long/long')) as string;
      const shown = row.slice(row.indexOf('ValidationError'));
      expect(shown).toMatch(/ (exist|the|does|not|field|named|in|request|contact)…$/);
      expect(shown.length).toBeLessThanOrEqual(120);
      const show = memoryIo(env);
      await dlqCommand.run(['show', 'd/evt_long/long'], show);
      expect(show.out()).toContain(reason);
    } finally {
      await worker.close();
      await handlers.obliterate({ force: true });
      await handlers.close();
      redis.disconnect();
    }
  });

  it('--queue handlers lists the dead runs of every priority; handlers-high only that level', async () => {
    const prefix = uniquePrefix('dlq-prio');
    const env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix, SWITCHYARD_HOME: '/nonexistent' };
    const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
    const high = new Queue('handlers-high', { connection: redis, prefix });
    const worker = new Worker(
      'handlers-high',
      async () => {
        throw new UnrecoverableError('broken');
      },
      { connection: redis, prefix },
    );
    try {
      await high.add(
        'urgent',
        {
          key: 'evt_hi',
          handlerId: 'urgent',
          receivedAt: new Date().toISOString(),
          event: { id: 'evt_hi', name: 'message.received', createdAt: null, data: {} },
        },
        { jobId: 'd/evt_hi/urgent', attempts: 1 },
      );
      await waitFor(async () => (await high.getFailedCount()) === 1);
      const ids = async (...args: string[]) => {
        const io = memoryIo(env);
        expect(await dlqCommand.run(['list', '--json', ...args], io)).toBe(0);
        return (JSON.parse(io.out()) as { entries: { id: string; queue: string }[] }).entries.map((e) => `${e.queue} ${e.id}`);
      };
      expect(await ids()).toEqual(['handlers-high d/evt_hi/urgent']);
      expect(await ids('--queue', 'handlers')).toEqual(['handlers-high d/evt_hi/urgent']);
      expect(await ids('--queue', 'handlers-high')).toEqual(['handlers-high d/evt_hi/urgent']);
      expect(await ids('--queue', 'handlers-low')).toEqual([]);
      await expect(dlqCommand.run(['list', '--queue', 'urgent'], memoryIo(env))).rejects.toThrow(
        '--queue: expected events, handlers-high, handlers, handlers-low, schedules, got "urgent"',
      );
    } finally {
      await worker.close();
      await high.obliterate({ force: true });
      await high.close();
      redis.disconnect();
    }
  });

  it('an unreachable Redis (any URL form) is an error naming it, password masked, not a hang', async () => {
    const started = Date.now();
    const io = memoryIo({ REDIS_URL: 'redis+cluster://u:hunter2@127.0.0.1:1', SWITCHYARD_HOME: '/nonexistent' });
    const err = await dlqCommand.run(['list'], io).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^cannot reach Redis at redis\+cluster:\/\/u:\*\*\*@127\.0\.0\.1:1/);
    expect(err?.message).not.toContain('hunter2');
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});
