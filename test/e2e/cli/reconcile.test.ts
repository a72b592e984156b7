/**
 * Never miss a change, with the built CLI: `switchyard start` (receiver +
 * worker, the shipped recipes) behind the sandbox's webhooks; the receiver is
 * unreachable while changes happen and the sandbox gives up; `switchyard
 * reconcile` finds them and each recipe writes once; a second reconcile
 * enqueues nothing; the lost deliveries arriving late (signed, over HTTP) are
 * stored (202) and write nothing.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/redis/managed.js';
import { createSandbox, type RunningSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import type { LoggedRequest } from '../../../src/sandbox/request-log.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { T } from '../../support/sandbox.js';
import { waitFor } from '../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../../handlers', import.meta.url));
const SECRET = 'e2e-reconcile-secret';
const OPEN_DAY = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][(new Date().getUTCDay() + 2) % 7] as string;
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('switchyard reconcile (built CLI) after lost deliveries', () => {
  let sandbox: Sandbox;
  let api: RunningSandbox;
  let start: CliProcess;
  let receiver: string;
  let since: string;
  let thread: number;
  const prefix = uniquePrefix('e2e-rc');
  const env = () => ({
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    WORKSPACE_API_URL: api.baseUrl,
    WORKSPACE_API_TOKEN: T.full,
    WORKSPACE_API_BURST: '100',
  });
  const reconcile = async (...args: string[]) => {
    const p = runCli(['reconcile', '--since', since, ...args], env());
    const code = await p.exited;
    return { code, out: p.output() };
  };
  const writes = async () => {
    const log = ((await (await fetch(`${api.url}/_sandbox/requests`)).json()) as { data: LoggedRequest[] }).data;
    const fresh = log.filter((r) => r.method === 'POST' && r.status === 201 && !r.replay);
    return {
      awayReply: fresh.filter((r) => r.path === `/conversations/${thread}/messages`).length,
      followUp: fresh.filter((r) => r.path === '/tasks').length,
    };
  };

  beforeAll(async () => {
    sandbox = createSandbox({ burst: 1000, retry: { baseMs: 50, maxMs: 200, maxAttempts: 4 } });
    api = await sandbox.listen(0);
    const port = await freePort();
    receiver = `http://127.0.0.1:${port}/webhooks`;
    start = runCli(['start'], {
      ...env(),
      WEBHOOK_SECRETS: SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      HANDLERS_DIR: HANDLERS,
      LOG_LEVEL: 'info',
      BUSINESS_HOURS: `${OPEN_DAY} 09:00-17:00 UTC`,
      AWAY_MESSAGE: 'We are away',
      FOLLOW_UP_DAYS: '2',
    });
    await start.waitFor(/worker started/, 30_000);
  }, 60_000);
  afterAll(async () => {
    await start?.stop('SIGTERM');
    await api?.close();
  });

  it('lost while the receiver was unreachable; reconcile writes once; again and late deliveries write nothing', async () => {
    since = new Date(Date.now() - 1).toISOString();
    sandbox.emitter.configure('http://127.0.0.1:9/webhooks', SECRET);
    const ws = ((await (await fetch(`${api.url}/_sandbox/workspaces`)).json()) as { data: { channels: { id: number; type: string }[] }[] })
      .data[0];
    const inbound = await post(`${api.url}/_sandbox/inbound`, {
      contact: { name: 'Night Owl' },
      channel_id: ws?.channels.find((c) => c.type === 'whatsapp')?.id,
      body: 'hello?',
    });
    thread = ((await inbound.json()) as { data: { conversation: { id: number } } }).data.conversation.id;
    const closed = await fetch(`${api.baseUrl}/conversations/${thread}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${T.full}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'closed', category: 'Resolved' }),
    });
    expect(closed.status).toBe(200);
    await waitFor(
      () => sandbox.emitter.deliveries().length === 4 && sandbox.emitter.deliveries().every((d) => d.state === 'failed'),
      30_000,
    );
    sandbox.emitter.configure(receiver, SECRET);
    expect(await writes()).toEqual({ awayReply: 0, followUp: 0 });

    const bad = await reconcile('--until', 'whenever');
    expect(bad.code).toBe(2);
    expect(bad.out).toMatch(/--until: "whenever" is neither an age nor a date; expected an age such as 30m, 6h or 2d, a date YYYY-MM-DD/);

    const first = await reconcile();
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/4 found, 0 already received, 4 enqueued, 0 pending/);
    await waitFor(async () => {
      const w = await writes();
      return w.awayReply === 1 && w.followUp === 1;
    }, 30_000);

    const again = await reconcile('--json');
    expect(again.code).toBe(0);
    // Five now: the away reply itself is a message.sent of the window, delivered as a webhook.
    const report = JSON.parse(again.out) as { totals: unknown; events: Record<string, { found: number; received: number }> };
    expect(report.totals).toEqual({ found: 5, received: 5, enqueued: 0, pending: 0 });
    expect(report.events['message.sent']).toMatchObject({ found: 1, received: 1 });

    expect(((await (await post(`${api.url}/_sandbox/events/redeliver`, {})).json()) as { data: { queued: number } }).data.queued).toBe(4);
    await waitFor(() => sandbox.emitter.deliveries().every((d) => d.state === 'delivered'), 30_000);
    expect(
      sandbox.emitter
        .deliveries()
        .slice(0, 4)
        .map((d) => d.last_status),
    ).toEqual([202, 202, 202, 202]);
    // Each of the four is a duplicate change at fan-out: no handler runs.
    await waitFor(() => (start.output().match(/duplicate change/g) ?? []).length >= 4, 15_000);
    expect(await writes()).toEqual({ awayReply: 1, followUp: 1 });
  }, 120_000);
});
