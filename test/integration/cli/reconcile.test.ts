import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileCommand } from '../../../src/cli/reconcile.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { decodeInboxItem } from '../../../src/queue/inbox-item.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { memoryIo } from '../../support/io.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { T } from '../../support/sandbox.js';

/** `switchyard reconcile` as a function: a sandbox, the shared Redis, no worker (what it stores stays in the inbox). */
describe('switchyard reconcile (CLI output)', () => {
  let api: RunningSandbox;
  let redis: Redis;
  const prefix = uniquePrefix('rc');
  let since: string;
  const env = () => ({
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    WORKSPACE_API_URL: api.baseUrl,
    WORKSPACE_API_TOKEN: T.full,
    WORKSPACE_API_BURST: '50',
  });

  beforeAll(async () => {
    const sandbox = createSandbox({ burst: 1000 });
    api = await sandbox.listen(0);
    redis = new Redis(testRedisUrl());
    since = new Date(Date.now() - 1).toISOString();
    const ws = ((await (await fetch(`${api.url}/_sandbox/workspaces`)).json()) as { data: { channels: { id: number }[] }[] }).data[0];
    const r = await fetch(`${api.url}/_sandbox/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contact: { name: 'Owl', email: 'owl@example.com' }, channel_id: ws?.channels[0]?.id, body: 'hi' }),
    });
    expect(r.status).toBe(201);
  });
  afterAll(async () => {
    await api?.close();
    redis?.disconnect();
  });

  it('--dry-run prints counts per event and enqueues nothing', async () => {
    const io = memoryIo(env());
    expect(await reconcileCommand.run(['--since', since, '--dry-run'], io)).toBe(0);
    expect(io.out()).toMatch(/\(dry run: nothing enqueued\)/);
    expect(io.out()).toMatch(/^message\.received\s+1\s+0\s+1\s+0\s+\d+$/m);
    expect(io.out()).toMatch(/3 found, 0 already received, 3 missing, 0 pending; \d+ API calls/);
    expect(io.err()).toMatch(/at most 10 API calls per 10 s \(RECONCILE_BUDGET 0.2 of 50\), low priority/);
    expect(await redis.llen(ingestKeys(prefix).inbox)).toBe(0);
  });

  it('enqueues synthesized deliveries (marked reconcile) into the inbox; a second run finds them pending', async () => {
    const io = memoryIo(env());
    expect(await reconcileCommand.run(['--since', since, '--json'], io)).toBe(0);
    const report = JSON.parse(io.out()) as { totals: Record<string, number>; events: Record<string, { examples: string[] }> };
    expect(report.totals).toEqual({ found: 3, received: 0, enqueued: 3, pending: 0 });
    const items = (await redis.lrange(ingestKeys(prefix).inbox, 0, -1)).map(decodeInboxItem);
    expect(items.map((d) => d.name).sort()).toEqual(['contact.created', 'conversation.created', 'message.received']);
    expect(items.every((d) => d.source === 'reconcile' && d.key.startsWith('rc:'))).toBe(true);

    const again = memoryIo(env());
    expect(await reconcileCommand.run(['--since', since, '--json', '--events', 'message.received'], again)).toBe(0);
    expect((JSON.parse(again.out()) as { totals: unknown }).totals).toEqual({ found: 1, received: 0, enqueued: 0, pending: 1 });
    expect(await redis.llen(ingestKeys(prefix).inbox)).toBe(3);
  });
});
