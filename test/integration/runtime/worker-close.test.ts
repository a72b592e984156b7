import { fileURLToPath } from 'node:url';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startPipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { waitFor } from '../../support/wait.js';

// Handlers and a schedule: the events worker, the handler workers of every priority and the schedules' worker.
const HANDLERS = fileURLToPath(new URL('../../support/handlers/schedule-dead', import.meta.url));

/** Sockets of this process still open to the test Redis. */
function redisSockets(): Socket[] {
  const port = Number(new URL(testRedisUrl()).port);
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h): h is Socket => (h as Socket).remotePort === port && !(h as Socket).destroyed);
}

describe('closing a worker', () => {
  it('closes every Redis connection it opened, those it gave its BullMQ workers included', async () => {
    const before = redisSockets().length;
    const p = await startPipeline({ handlersDir: HANDLERS });
    expect(redisSockets().length).toBeGreaterThan(before + 4);
    await p.close();
    await waitFor(() => redisSockets().length <= before, 5_000, 50).catch(() => undefined);
    expect(redisSockets().length).toBe(before);
  });
});
