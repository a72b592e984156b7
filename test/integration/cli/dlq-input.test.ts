import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqCommand } from '../../../src/cli/dlq.js';
import { deliveriesCommand } from '../../../src/cli/deliveries.js';
import { traceCommand } from '../../../src/cli/trace.js';
import { HistoryWriter } from '../../../src/history/writer.js';
import { createLogger } from '../../../src/log/logger.js';
import { HANDLERS_QUEUE } from '../../../src/queue/names.js';
import { memoryIo } from '../../support/io.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { waitFor } from '../../support/service.js';

// Data from a delivery (its id, an error message) reaches the terminal escaped, never as control
// characters; a --handler that names no handler is an error with a did-you-mean, not "0 jobs moved".
const EVIL = '\u001b[31mevil\u001b[0m';
const ESC = '\u001b';
const KIT = pathToFileURL(fileURLToPath(new URL('../../../src/index.ts', import.meta.url))).href;
const handlerModule = (id: string) =>
  `import { defineHandler } from '${KIT}';\nexport default defineHandler({ id: '${id}', on: ['lead.won'], handle() {} });\n`;

describe('dlq, deliveries and trace: input and output', () => {
  const prefix = uniquePrefix('dlqin');
  const redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  const dir = mkdtempSync(join(tmpdir(), 'sy-dlqin-'));
  const env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix, HANDLERS_DIR: dir };
  const run = async (cmd: typeof dlqCommand, ...argv: string[]) => {
    const io = memoryIo(env);
    const code = await cmd.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };

  beforeAll(async () => {
    writeFileSync(join(dir, 'follow-up.mjs'), handlerModule('follow-up-task'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
    const queue = new Queue(HANDLERS_QUEUE, { connection: redis, prefix });
    await queue.add(
      'follow-up-task',
      { key: EVIL, handlerId: 'follow-up-task', event: { name: 'conversation.closed' }, receivedAt: new Date().toISOString() },
      { jobId: `d/${EVIL}/follow-up-task` },
    );
    const worker = new Worker(
      HANDLERS_QUEUE,
      async () => {
        throw new UnrecoverableError(`bad ${EVIL} reply`);
      },
      { connection: redis, prefix },
    );
    await waitFor(async () => (await queue.getFailedCount()) === 1);
    await worker.close();
    await queue.close();
    const writer = new HistoryWriter(redis, { prefix, ttlMs: 3_600_000 }, createLogger({ level: 'silent' }));
    writer.fannedOut(
      EVIL,
      { receivedAt: new Date().toISOString(), queuedAt: Date.now(), secretIndex: 0, bytes: 10, source: 'webhook' },
      {
        event: 'conversation.closed',
        conversation: '1',
        contact: null,
        handlers: [{ id: 'follow-up-task', placement: 'queued', priority: 'normal' }],
      },
    );
    writer.flush();
    await waitFor(async () => (await run(deliveriesCommand, '--json')).out.includes('evil'));
  });
  afterAll(async () => {
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it('dlq list and dlq show print the control characters of an id and a reason escaped', async () => {
    const list = await run(dlqCommand, 'list');
    expect(list.code).toBe(0);
    expect(list.out).not.toContain(ESC);
    expect(list.out).toContain('d/\\u001b[31mevil\\u001b[0m/follow-up-task');
    expect(list.out).toContain('bad \\u001b[31mevil');
    const show = await run(dlqCommand, 'show', EVIL);
    expect(show.code).toBe(0);
    expect(show.out).not.toContain(ESC);
    expect(show.out).toContain('delivery:  \\u001b[31mevil\\u001b[0m');
    // JSON stays exact (JSON escapes them itself).
    expect((JSON.parse((await run(dlqCommand, 'list', '--json')).out) as { entries: { key: string }[] }).entries[0]?.key).toBe(EVIL);
  });

  it('deliveries and trace print them escaped', async () => {
    const list = await run(deliveriesCommand);
    expect(list.out).not.toContain(ESC);
    expect(list.out).toContain('\\u001b[31mevil');
    const trace = await run(traceCommand, EVIL);
    expect(trace.code).toBe(0);
    expect(trace.out).not.toContain(ESC);
    expect(trace.out).toContain('delivery \\u001b[31mevil\\u001b[0m');
    const missing = await run(traceCommand, `nope${EVIL}`);
    expect(missing.code).toBe(1);
    expect(missing.err).not.toContain(ESC);
  });

  it('trace refuses an empty reference instead of looking it up', async () => {
    await expect(run(traceCommand, '')).rejects.toThrow('trace expects a delivery key or job id, got an empty one');
  });

  it('retry, list and purge with a --handler that names no handler: exit 1 with a did-you-mean; a real one with no dead job: 0', async () => {
    for (const sub of ['retry', 'list', 'purge']) {
      const r = await run(dlqCommand, sub, '--handler', 'follow-up-tsak');
      expect(r.code).toBe(1);
      expect(r.out).toBe('');
      expect(r.err).toContain('no handler or schedule "follow-up-tsak"');
      expect(r.err).toContain('did you mean "follow-up-task"?');
    }
    expect((await run(dlqCommand, 'retry', '--handler', 'no-such-handler')).err).toContain('(known: follow-up-task)');
    writeFileSync(join(dir, 'digest.mjs'), handlerModule('digest'));
    const real = await run(dlqCommand, 'retry', '--handler', 'digest');
    expect(real.err).toBe('');
    expect(real).toMatchObject({ code: 0, out: '0 jobs moved back to waiting\n' });
  });
});
