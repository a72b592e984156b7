/**
 * Every change recoverable, with the built CLI: `switchyard start` (receiver +
 * worker, a handler on conversation.opened, conversation.assigned,
 * contact.lifecycle_changed and lead.won) keeps the snapshot of those fields
 * (SNAPSHOT_EVERY=1s). A thread is assigned to Olivia, then to Sam (both
 * delivered). While the sandbox's webhooks are lost, it is assigned back to
 * Olivia (the key of a change received before), a closed thread is reopened,
 * a contact moves stage and a lead created days ago is won. `switchyard
 * reconcile` finds the four from the snapshot and the handler writes once for
 * each, with the data a webhook carries; a second reconcile and the lost
 * deliveries arriving late write nothing; assigning the thread to Sam again,
 * a real change with the key of an earlier one, writes again.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../../src/redis/managed.js';
import { createSandbox, type RunningSandbox, type Sandbox } from '../../../../src/sandbox/index.js';
import type { LoggedRequest } from '../../../../src/sandbox/request-log.js';
import { runCli, type CliProcess } from '../../../support/cli.js';
import { testRedisUrl, uniquePrefix } from '../../../support/redis.js';
import { T } from '../../../support/sandbox.js';
import { waitFor } from '../../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../../support/handlers/recover', import.meta.url));
const SECRET = 'e2e-snapshot-secret';
type Json = Record<string, unknown>;

describe('reconcile from the snapshot (built CLI): the four moves without a time', () => {
  let sandbox: Sandbox;
  let api: RunningSandbox;
  let start: CliProcess;
  let receiver: string;
  const prefix = uniquePrefix('e2e-snap');
  const env = () => ({
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    WORKSPACE_API_URL: api.baseUrl,
    WORKSPACE_API_TOKEN: T.full,
    WORKSPACE_API_BURST: '100',
  });
  const call = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const hook = path.startsWith('/_sandbox');
    const r = await fetch(`${hook ? api.url : api.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${T.full}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${text}`);
    return text ? (JSON.parse(text) as { data: Json }).data : {};
  };
  const reconcile = async (since: string) => {
    const p = runCli(['reconcile', '--since', since, '--json'], env());
    const code = await p.exited;
    expect(code, p.output()).toBe(0);
    return JSON.parse(p.output().trim().split('\n').at(-1) as string) as {
      totals: Json;
      events: Record<string, Json>;
      untracked: string[];
    };
  };
  /** Titles of the tasks the handler created (fresh writes only, not Idempotency-Key replays). */
  const tasks = async (): Promise<string[]> => {
    const log = (await call('GET', '/_sandbox/requests')) as unknown as LoggedRequest[];
    return log
      .filter((r) => r.method === 'POST' && r.path === '/tasks' && r.status === 201 && !r.replay)
      .map((r) => String((r.body as Json)['title']));
  };
  const count = (all: string[], title: string) => all.filter((t) => t === title).length;

  beforeAll(async () => {
    sandbox = createSandbox({ burst: 1000, retry: { baseMs: 50, maxMs: 200, maxAttempts: 3 } });
    api = await sandbox.listen(0);
    const port = await freePort();
    receiver = `http://127.0.0.1:${port}/webhooks`;
    sandbox.emitter.configure(receiver, SECRET);
    start = runCli(['start'], {
      ...env(),
      WEBHOOK_SECRETS: SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      HANDLERS_DIR: HANDLERS,
      LOG_LEVEL: 'info',
      SNAPSHOT_EVERY: '1s',
    });
    await start.waitFor(/worker started/, 30_000);
    for (const kind of ['conversations', 'leads', 'contacts']) await start.waitFor(new RegExp(`snapshot: ${kind} baseline taken`), 30_000);
  }, 90_000);
  afterAll(async () => {
    await start?.stop('SIGTERM');
    await api?.close();
  });

  it('lost moves are found from the snapshot and run once; again, late deliveries: nothing; a real move back runs', async () => {
    const ws = (
      (await call('GET', '/_sandbox/workspaces')) as unknown as {
        teammates: { id: number; active: boolean }[];
        lifecycle_stages: { id: number; name: string }[];
      }[]
    )[0]!;
    const [olivia, sam] = ws.teammates.filter((t) => t.active);
    const threads = (await call('GET', '/conversations?per_page=100')) as unknown as { id: number; status: string }[];
    const open = threads.find((c) => c.status === 'open')!;
    const closed = threads.find((c) => c.status === 'closed')!;
    const lead = ((await call('GET', '/leads?outcome=open')) as unknown as { id: number; created_at: string }[])[0]!;
    expect(Date.parse(lead.created_at)).toBeLessThan(Date.now() - 86_400_000);
    const carol = (
      (await call('GET', '/contacts?include=lifecycle&per_page=100')) as unknown as {
        id: number;
        lifecycle: { id: number; name: string } | null;
      }[]
    ).find((c) => c.lifecycle !== null)!;
    const target = ws.lifecycle_stages.find((s) => s.id !== carol.lifecycle?.id)!;

    // Before the outage, delivered: assigned to Olivia, then to Sam; each runs the handler once, and the snapshot sees each.
    const seen = () => (start.output().match(/snapshot: 1 changes seen/g) ?? []).length;
    const toOlivia = `assigned ${open.id} to user:${olivia!.id}`;
    const toSam = `assigned ${open.id} to user:${sam!.id}`;
    await call('PATCH', `/conversations/${open.id}`, { assignee: { type: 'user', id: olivia!.id } });
    await waitFor(async () => count(await tasks(), toOlivia) === 1 && seen() === 1, 30_000);
    // Told apart by time on the API's clock within AFTER_SKEW_MS (2 s) of the refresh that sees Sam (whole seconds): let one pass.
    await new Promise((r) => setTimeout(r, 3_500));
    await call('PATCH', `/conversations/${open.id}`, { assignee: { type: 'user', id: sam!.id } });
    await waitFor(async () => count(await tasks(), toSam) === 1 && seen() === 2, 30_000);
    const since = new Date().toISOString();

    // The outage: every webhook of these four moves is lost for good.
    sandbox.emitter.configure('http://127.0.0.1:9/webhooks', SECRET);
    const before = sandbox.emitter.deliveries().length;
    await call('PATCH', `/conversations/${open.id}`, { assignee: { type: 'user', id: olivia!.id } });
    await call('PATCH', `/conversations/${closed.id}`, { status: 'open' });
    await call('PUT', `/contacts/${carol.id}/lifecycle`, { stage: target.name });
    await call('POST', `/_sandbox/leads/${lead.id}/outcome`, { outcome: 'won' });
    await waitFor(() => {
      const d = sandbox.emitter.deliveries().slice(before);
      return d.length === 4 && d.every((x) => x.state === 'failed');
    }, 30_000);
    sandbox.emitter.configure(receiver, SECRET);

    const expected = [`opened ${closed.id}`, `stage ${carol.id} ${carol.lifecycle!.name} > ${target.name}`, `won ${lead.id}`];
    for (const t of expected) expect(count(await tasks(), t)).toBe(0);
    expect(count(await tasks(), toOlivia)).toBe(1);

    const first = await reconcile(since);
    for (const e of ['conversation.assigned', 'conversation.opened', 'contact.lifecycle_changed', 'lead.won']) {
      expect(first.events[e], e).toMatchObject({ found: 1, received: 0, enqueued: 1, pending: 0 });
    }
    expect(first.totals).toMatchObject({ enqueued: 4 });
    expect(first.untracked).toEqual([]);
    // Assigned back to Olivia: its key was claimed by the first assignment, before the snapshot saw Sam; a new change, it runs.
    await waitFor(async () => {
      const all = await tasks();
      return expected.every((t) => count(all, t) === 1) && count(all, toOlivia) === 2;
    }, 30_000);
    // The reconciled runs say where they came from.
    const log = (await call('GET', '/_sandbox/requests')) as unknown as LoggedRequest[];
    const reconciled = log.filter(
      (r) => r.method === 'POST' && r.path === '/tasks' && r.status === 201 && (r.body as Json)['description'] === 'source reconcile',
    );
    expect(reconciled.map((r) => (r.body as Json)['title']).sort()).toEqual([...expected, toOlivia].sort());

    const again = await reconcile(since);
    expect(again.totals).toMatchObject({ enqueued: 0, pending: 0 });
    for (const e of ['conversation.assigned', 'conversation.opened', 'contact.lifecycle_changed', 'lead.won'])
      expect(again.events[e], e).toMatchObject({ enqueued: 0 });

    // The lost deliveries arrive late: stored (202), each a duplicate change at fan-out.
    const dupes = (start.output().match(/duplicate change/g) ?? []).length;
    expect(((await call('POST', '/_sandbox/events/redeliver', {})) as { queued: number }).queued).toBe(4);
    await waitFor(
      () =>
        sandbox.emitter
          .deliveries()
          .slice(before)
          .every((d) => d.state === 'delivered'),
      30_000,
    );
    expect(
      sandbox.emitter
        .deliveries()
        .slice(before)
        .map((d) => d.last_status),
    ).toEqual([202, 202, 202, 202]);
    await waitFor(() => (start.output().match(/duplicate change/g) ?? []).length >= dupes + 4, 15_000);

    // A real move back to Sam: the key of the second assignment, delivered with another id: a new change; it runs.
    await call('PATCH', `/conversations/${open.id}`, { assignee: { type: 'user', id: sam!.id } });
    await waitFor(async () => count(await tasks(), toSam) === 2, 30_000);
    const all = await tasks();
    for (const t of expected) expect(count(all, t), t).toBe(1);
    expect(count(all, toOlivia)).toBe(2);
    expect(all).toHaveLength(7);
  }, 180_000);
});
