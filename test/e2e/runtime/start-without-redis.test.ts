/**
 * `serve` and `start` when REDIS_URL points at a Redis that is not there:
 * the port opens at once, the outage is said (password masked, no stack),
 * deliveries get 503 + Retry-After (no spool), and a signal stops the process
 * within SHUTDOWN_TIMEOUT. Then Redis comes up: the worker starts and runs.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { eventBody } from '../../support/events.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { uniquePrefix } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';

const SECRET = 'no-redis-secret';
const PASSWORD = 'pw-never-logged-7f3a';

describe('switchyard serve/start with Redis unreachable (built CLI)', () => {
  const procs: CliProcess[] = [];
  let redis: ManagedRedis | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await Promise.allSettled(procs.map((p) => p.stop('SIGKILL')));
    procs.length = 0;
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    redis = undefined;
    dir = undefined;
  });

  it('serve listens at once, answers 503 + Retry-After without a spool, warns with the password masked, stops within SHUTDOWN_TIMEOUT', async () => {
    const [port, redisPort] = [await freePort(), await freePort()];
    const proc = runCli(['serve'], {
      WEBHOOK_SECRETS: SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      SHUTDOWN_TIMEOUT: '2s',
      LOG_LEVEL: 'info',
      REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${redisPort}`,
      QUEUE_PREFIX: uniquePrefix('noredis'),
    });
    procs.push(proc);
    await proc.waitFor(/receiver listening/, 10_000);
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const refused = await deliver(`${base}/webhooks`, eventBody(), SECRET);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    await proc.waitFor(/"level":"warn".*is unreachable/, 5_000);
    const out = proc.output();
    expect(out).toContain(`"redis":"redis://:***@127.0.0.1:${redisPort}"`);
    expect(out).not.toContain(PASSWORD);
    expect(out).not.toMatch(/\n\s+at /);

    const t0 = Date.now();
    const code = await proc.stop('SIGINT', 15_000);
    // SHUTDOWN_TIMEOUT is 2 s; allow the process start-up/exit overhead of a loaded machine.
    expect(Date.now() - t0).toBeLessThan(2_000 + 3_000);
    expect(code).toBe(0);
  });

  it('start: SIGTERM while the worker waits for Redis stops the process within SHUTDOWN_TIMEOUT', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-noredis-'));
    mkdirSync(join(dir, 'handlers'));
    const [port, redisPort] = [await freePort(), await freePort()];
    const proc = runCli(['start'], {
      WEBHOOK_SECRETS: SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      SHUTDOWN_TIMEOUT: '2s',
      LOG_LEVEL: 'info',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      QUEUE_PREFIX: uniquePrefix('noredis'),
      HANDLERS_DIR: join(dir, 'handlers'),
    });
    procs.push(proc);
    await proc.waitFor(/the worker starts when it answers/, 10_000);
    const t0 = Date.now();
    expect(await proc.stop('SIGTERM', 15_000)).toBe(0);
    expect(Date.now() - t0).toBeLessThan(2_000 + 3_000);
    expect(proc.output()).not.toMatch(/worker started/);
  });

  it('start: the worker waits for Redis, then starts and runs what was spooled meanwhile', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sy-noredis-'));
    const [port, redisPort] = [await freePort(), await freePort()];
    mkdirSync(join(dir, 'handlers'));
    const proc = runCli(['start'], {
      WEBHOOK_SECRETS: SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      SHUTDOWN_TIMEOUT: '2s',
      LOG_LEVEL: 'info',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      QUEUE_PREFIX: uniquePrefix('noredis'),
      SPOOL_DIR: join(dir, 'spool'),
      HANDLERS_DIR: join(dir, 'handlers'),
    });
    procs.push(proc);
    await proc.waitFor(/receiver listening/, 10_000);
    await proc.waitFor(/the worker starts when it answers/, 5_000);
    const body = eventBody('lead.won');
    const spooled = await deliver(`http://127.0.0.1:${port}/webhooks`, body, SECRET);
    expect(spooled.status).toBe(202);
    expect(await spooled.json()).toMatchObject({ status: 'accepted' });
    expect(proc.output()).not.toMatch(/worker started/);

    redis = await startManagedRedis({ dir: join(dir, 'redis'), port: redisPort });
    await proc.waitFor(/is reachable again/, 15_000);
    await proc.waitFor(/worker started/, 15_000);
    await proc.waitFor(/spooled deliveries moved into Redis/, 15_000);
    // Once drained, the same delivery is now recognised as a duplicate by Redis.
    await waitFor(async () => (await deliver(`http://127.0.0.1:${port}/webhooks`, body, SECRET)).status === 200, 10_000, 200);
  });
});
