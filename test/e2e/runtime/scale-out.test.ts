import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import type { LoggedRequest } from '../../../src/sandbox/request-log.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, TEST_SECRET, waitFor } from '../../support/service.js';
import { maxInWindow } from '../../../bench/lib/windows.js';

const TEST_HANDLERS = fileURLToPath(new URL('../../support/handlers/notes', import.meta.url));
const DISTINCT = 3_000;
const DUPLICATE_SHARE = 0.3;
const BURST = 600;

describe('scale-out: 2 receivers and 3 workers on one Redis', () => {
  const prefix = uniquePrefix('scale');
  let api: RunningSandbox;
  const receivers: { proc: CliProcess; url: string }[] = [];
  const workers: CliProcess[] = [];

  beforeAll(async () => {
    api = await createSandbox({ burst: BURST }).listen(0);
    const common = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn', WEBHOOK_SECRETS: TEST_SECRET };
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const proc = runCli(['serve'], { ...common, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' });
      receivers.push({ proc, url: `http://127.0.0.1:${port}/webhooks` });
    }
    for (let i = 0; i < 3; i++) {
      workers.push(
        runCli(['work'], {
          ...common,
          LOG_LEVEL: 'info',
          HANDLERS_DIR: TEST_HANDLERS,
          WORKSPACE_API_URL: api.baseUrl,
          WORKSPACE_API_TOKEN: 'sbx_full_acme',
          WORKSPACE_API_BURST: String(BURST),
          WORKER_CONCURRENCY: '20',
        }),
      );
    }
    await Promise.all([...receivers.map((r) => r.proc.waitFor(/receiver listening/)), ...workers.map((w) => w.waitFor(/worker started/))]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([...receivers.map((r) => r.proc.stop('SIGTERM')), ...workers.map((w) => w.stop('SIGTERM'))]);
    await api.close();
  });

  it('runs every delivery exactly once, stays under the API burst, and loses nothing when a worker stops mid-load', async () => {
    // Set-up reads use another token: the burst is counted per token, and this call must not eat the workers' allowance.
    const conv = (
      (await (await fetch(`${api.baseUrl}/conversations`, { headers: { authorization: 'Bearer sbx_read_acme' } })).json()) as {
        data: { id: number }[];
      }
    ).data[0]?.id as number;
    const bodies = Array.from({ length: DISTINCT }, () => messageBody('message.received', conv));
    // Each delivery goes to a random receiver; 30% of them are repeated to the other one.
    const sends: { body: string; to: number }[] = [];
    for (const body of bodies) {
      const to = Math.random() < 0.5 ? 0 : 1;
      sends.push({ body, to });
      if (Math.random() < DUPLICATE_SHARE) sends.push({ body, to: 1 - to });
    }
    sends.sort(() => Math.random() - 0.5);

    const statuses: number[] = [];
    let next = 0;
    let stopped: Promise<number | null> | undefined;
    const sender = async () => {
      while (next < sends.length) {
        const s = sends[next++] as { body: string; to: number };
        statuses.push((await deliver((receivers[s.to] as { url: string }).url, s.body)).status);
        // A third of the way through, stop one worker gracefully.
        if (next === Math.floor(sends.length / 3) && !stopped) stopped = (workers[0] as CliProcess).stop('SIGTERM');
      }
    };
    await Promise.all(Array.from({ length: 32 }, sender));
    expect(await stopped).toBe(0);
    expect(statuses.filter((s) => s !== 200 && s !== 202)).toEqual([]);
    expect(statuses.filter((s) => s === 202)).toHaveLength(DISTINCT);

    const wanted = new Set(bodies.map((b) => `seen ${deliveryId(b)}`));
    const writes = async () =>
      ((await (await fetch(`${api.url}/_sandbox/requests?method=POST&path=/conversations/*/notes`)).json()) as { data: LoggedRequest[] })
        .data;
    const log = await waitFor(
      async () => {
        const all = await writes();
        const done = new Set(all.filter((r) => r.status === 201).map((r) => (r.body as { body: string }).body));
        return [...wanted].every((w) => done.has(w)) ? all : undefined;
      },
      240_000,
      1_000,
    );

    const fresh = log.filter((r) => r.status === 201 && !r.replay).map((r) => (r.body as { body: string }).body);
    expect(fresh).toHaveLength(DISTINCT);
    expect(new Set(fresh).size).toBe(DISTINCT);
    expect(log.filter((r) => r.status === 429)).toHaveLength(0);
    const every = ((await (await fetch(`${api.url}/_sandbox/requests?token=full`)).json()) as { data: LoggedRequest[] }).data;
    expect(every.length).toBeGreaterThanOrEqual(DISTINCT);
    expect(maxInWindow(every.map((r) => Date.parse(r.time)))).toBeLessThanOrEqual(BURST);
  }, 300_000);
});
