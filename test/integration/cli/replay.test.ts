import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCommand } from '../../../src/cli/replay.js';
import { decodeInboxItem } from '../../../src/queue/inbox-item.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { buildDelivery, readInputs, type ReplaySummary } from '../../../src/replay/index.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { match } from '../../support/match.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { startTestService, TEST_SECRET } from '../../support/service.js';
import { memoryIo } from '../../support/io.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures', import.meta.url));
const HANDLERS = fileURLToPath(new URL('../../../handlers', import.meta.url));
const summaryOf = (out: string): ReplaySummary => JSON.parse(out.trim().split('\n').pop() as string) as ReplaySummary;

describe('replay over HTTP', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  const prefix = uniquePrefix('replay');
  beforeAll(async () => {
    svc = await startTestService({ REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix });
  });
  afterAll(async () => svc?.close());

  it('sends every fixture signed with --secret: accepted, then duplicate, then accepted again with --new-ids', async () => {
    const total = (await readInputs([FIXTURES], '/')).length;
    const run = async (...extra: string[]) => {
      const io = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
      const code = await replayCommand.run([FIXTURES, '--to', svc.url, '--json', '--concurrency', '4', ...extra], io);
      return { code, s: summaryOf(io.out()) };
    };
    const first = await run();
    expect(first.code).toBe(0);
    expect(first.s).toMatchObject({ total, accepted: total, duplicate: 0, rejected: 0, failed: 0 });
    const second = await run();
    expect(second.s).toMatchObject({ accepted: 0, duplicate: total });
    const fresh = await run('--new-ids');
    expect(fresh.s).toMatchObject({ accepted: total, duplicate: 0 });
    // Bodies that are not JSON objects have no id to renew: their key is the body hash.
    const malformed = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
    await replayCommand.run([join(FIXTURES, '_malformed'), '--to', svc.url, '--json', '--new-ids'], malformed);
    const again = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
    await replayCommand.run([join(FIXTURES, '_malformed'), '--to', svc.url, '--json', '--new-ids'], again);
    expect(summaryOf(again.out())).toMatchObject({ accepted: 6, duplicate: 2 });
  });

  it('a wrong secret is rejected (exit 1) and each problem names its file; plain lines without --json', async () => {
    const io = memoryIo({});
    const code = await replayCommand.run([join(FIXTURES, 'lead.won.json'), '--to', svc.url, '--secret', 'wrong'], io);
    expect(code).toBe(1);
    expect(io.out()).toMatch(/rejected\s+lead\.won .*lead\.won\.json\n {2}HTTP 401/);
    expect(io.out()).toMatch(/1 deliveries in .*0 accepted, 0 duplicate, 1 rejected, 0 failed/);
  });

  it('an unreachable receiver is failed (exit 1); a TTY gets a progress bar', async () => {
    const io = memoryIo({ WEBHOOK_SECRETS: 's' }, { tty: true });
    const code = await replayCommand.run([join(FIXTURES, 'lead.won.json'), '--to', 'http://127.0.0.1:1/webhooks'], io);
    expect(code).toBe(1);
    expect(io.err()).toMatch(/\[#+\] 1\/1/);
    expect(io.err()).toMatch(/1 failed/);
  });

  it('filters with --event, --since and --limit', async () => {
    const io = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
    expect(await replayCommand.run([FIXTURES, '--to', svc.url, '--json', '--event', 'lead.won,lead.lost', '--new-ids'], io)).toBe(0);
    expect(summaryOf(io.out()).total).toBe(2);
    const io2 = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
    await replayCommand.run([FIXTURES, '--to', svc.url, '--json', '--since', '1h', '--limit', '1'], io2);
    expect(summaryOf(io2.out()).total).toBe(0);
  });

  it('reports bad arguments as usage errors', async () => {
    const io = memoryIo({});
    await expect(replayCommand.run([], io)).rejects.toThrow(/at least one fixture/);
    await expect(replayCommand.run([FIXTURES, '--event', 'lead.wonn'], io)).rejects.toThrow(/did you mean "lead.won"/);
    await expect(replayCommand.run([FIXTURES, '--direct', '--inline'], io)).rejects.toThrow(/exclude/);
    await expect(replayCommand.run([FIXTURES, '--since', 'soon'], io)).rejects.toThrow(/--since/);
    await expect(replayCommand.run([FIXTURES, '--limit', '0'], io)).rejects.toThrow(/--limit/);
    await expect(replayCommand.run([FIXTURES], io)).rejects.toThrow(/WEBHOOK_SECRETS/);
    await expect(replayCommand.run(['missing-dir'], io)).rejects.toThrow(/no such file/);
    await expect(replayCommand.run([FIXTURES, '--bogus'], io)).rejects.toThrow(/bogus/);
  });
});

describe('replay --direct', () => {
  it('stores into the ingest inbox with the receiver dedupe, no HTTP', async () => {
    const prefix = uniquePrefix('direct');
    const redis = new Redis(testRedisUrl());
    try {
      const env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix };
      const io = memoryIo(env);
      expect(await replayCommand.run([FIXTURES, '--direct', '--event', 'lead.won', '--json'], io)).toBe(0);
      expect(summaryOf(io.out())).toMatchObject({ total: 1, accepted: 1 });
      const keys = ingestKeys(prefix);
      const inbox = await redis.lrange(keys.inbox, 0, -1);
      expect(inbox).toHaveLength(1);
      const item = decodeInboxItem(inbox[0] as string);
      expect(item).toMatchObject({ name: 'lead.won', key: match.any(String) });
      expect(await redis.exists(keys.dedupe(item.key))).toBe(1);
      const again = memoryIo(env);
      await replayCommand.run([FIXTURES, '--direct', '--event', 'lead.won', '--json'], again);
      expect(summaryOf(again.out())).toMatchObject({ accepted: 0, duplicate: 1 });
      expect(await redis.llen(keys.inbox)).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  it('without a Redis URL it says what to set', async () => {
    await expect(replayCommand.run([FIXTURES, '--direct'], memoryIo({ SWITCHYARD_HOME: '/nonexistent' }))).rejects.toThrow(/REDIS_URL/);
  });
});

describe('replay --inline against the sandbox', () => {
  let api: RunningSandbox;
  let contact: { id: number; name: string };
  const dir = mkdtempSync(join(tmpdir(), 'sy-inline-'));
  beforeAll(async () => {
    api = await createSandbox({ burst: 100 }).listen(0);
    const r = await fetch(`${api.baseUrl}/contacts`, { headers: { authorization: 'Bearer sbx_full_acme' } });
    contact = ((await r.json()) as { data: { id: number; name: string; blocked: boolean }[] }).data.find((c) => !c.blocked) as {
      id: number;
      name: string;
    };
    const closed = buildDelivery('conversation.closed', { sets: [`data.contact_id=${contact.id}`, 'data.assignee=null'] });
    writeFileSync(join(dir, 'closed.json'), closed.bytes);
  });
  afterAll(async () => api?.close());

  it('runs the subscribed recipe with no Redis, printing its outcome and API calls; the write lands in the sandbox', async () => {
    const io = memoryIo({
      WORKSPACE_API_URL: api.baseUrl,
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
      HANDLERS_DIR: HANDLERS,
      FOLLOW_UP_DAYS: '3',
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    const code = await replayCommand.run([dir, '--inline', '--handler', 'follow-up-task'], io);
    expect(io.out()).toMatch(/✓ follow-up-task completed/);
    expect(io.out()).toMatch(/GET\s+contacts\.get → 200/);
    expect(io.out()).toMatch(/POST\s+tasks\.create → 201/);
    expect(code).toBe(0);
    const log = (await (await fetch(`${api.url}/_sandbox/requests?method=POST&path=/tasks`)).json()) as {
      data: { status: number; body: { title: string; due_at: string } }[];
    };
    const task = log.data.find((x) => x.status === 201);
    expect(task?.body.title).toBe(`Follow up with ${contact.name}`);
  });

  it('replaying after a handler change writes afresh (keys per run); --reuse-keys sends the worker keys and explains a reused key', async () => {
    const file = join(dir, 'edited.json');
    writeFileSync(file, buildDelivery('conversation.closed', { sets: [`data.contact_id=${contact.id}`, 'data.assignee=null'] }).bytes);
    // FOLLOW_UP_DAYS stands for an edited handler: the same delivery now writes a different body.
    const run = async (days: string, ...extra: string[]) => {
      const io = memoryIo({
        WORKSPACE_API_URL: api.baseUrl,
        WORKSPACE_API_TOKEN: 'sbx_full_acme',
        HANDLERS_DIR: HANDLERS,
        FOLLOW_UP_DAYS: days,
      });
      const code = await replayCommand.run([file, '--inline', '--handler', 'follow-up-task', ...extra], io);
      return { code, out: io.out() };
    };
    const first = await run('1');
    expect(first.out).toMatch(/✓ follow-up-task completed/);
    const edited = await run('4');
    expect(edited.code).toBe(0);
    expect(edited.out).toMatch(/POST\s+tasks\.create → 201\n/);

    const keyed = await run('6', '--reuse-keys');
    expect(keyed.out).toMatch(/POST\s+tasks\.create → 201/);
    const keyedEdited = await run('8', '--reuse-keys');
    expect(keyedEdited.code).toBe(1);
    expect(keyedEdited.out).toMatch(
      /✗ follow-up-task dead .*\n {4}the API already saw this Idempotency-Key with a different body .*replay without --reuse-keys/,
    );
    const keyedSame = await run('6', '--reuse-keys');
    expect(keyedSame.out).toMatch(/POST\s+tasks\.create → 201 \(replayed\)/);
    await expect(replayCommand.run([file, '--reuse-keys'], memoryIo({}))).rejects.toThrow(/--reuse-keys applies to --inline only/);
  });

  it('an invalid delivery is rejected with the catalogue reason, a failing handler is failed (exit 1)', async () => {
    const io = memoryIo({ WORKSPACE_API_URL: api.baseUrl, WORKSPACE_API_TOKEN: 'sbx_full_acme', HANDLERS_DIR: HANDLERS });
    const missing = join(dir, 'missing-contact.json');
    writeFileSync(missing, buildDelivery('conversation.closed', { sets: ['data.contact_id=999999'] }).bytes);
    const code = await replayCommand.run(
      [join(FIXTURES, '_malformed', 'invalid-data.json'), missing, '--inline', '--concurrency', '1'],
      io,
    );
    expect(code).toBe(1);
    expect(io.out()).toMatch(/rejected .*\n {2}invalid_data: data of/);
    // Contact 999999 does not exist in the sandbox: the recipe's read is a 404, dead-lettered.
    expect(io.out()).toMatch(/✗ follow-up-task dead after \d+ ms: .*404|✗ follow-up-task dead/);
  });
});
