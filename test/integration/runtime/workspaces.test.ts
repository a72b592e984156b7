import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspacePrefix } from '../../../src/config/index.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { HANDLER_QUEUE_BY_PRIORITY } from '../../../src/queue/names.js';
import { conversationBody, deliveryId, messageBody } from '../../support/events.js';
import { testRedisUrl } from '../../support/redis.js';
import { waitFor } from '../../support/service.js';
import { startTwoWorkspaces, WS_SECRET, type TwoWorkspaces, type Ws } from '../../support/workspaces.js';
import { parseSamples, valueOf } from '../../support/prom-text.js';

const g = globalThis as { __syWsGate?: Promise<void>; __syWsHeld?: string[] };

/**
 * A deployment of two workspaces (WORKSPACES_FILE) in one process, as a user runs it: each workspace's
 * webhooks on its own path verified with its own secrets, its handlers writing with its own token (the
 * sandbox's two seeded workspaces). The same conversation id in both never shares a dedupe entry, a
 * change claim, a wait, an order line or a state.
 */
describe('a deployment of two workspaces', () => {
  let w: TwoWorkspaces;
  let redis: Redis;
  let dir: string;
  const SECRET = WS_SECRET;

  beforeAll(async () => {
    w = await startTwoWorkspaces({ MAX_BODY_BYTES: '4096' });
    dir = w.dir;
    redis = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    await w?.close();
    redis?.disconnect();
  });

  const post = (path: string, body: string, secret: string) => w.post(path, body, secret);
  const deliver = (ws: Ws, body: string) => w.deliver(ws, body);
  const written = (ws: Ws) => w.written(ws);
  const handlerJob = async (ws: Ws, body: string, handler: string) => {
    const q = new Queue(HANDLER_QUEUE_BY_PRIORITY.normal, { connection: redis, prefix: workspacePrefix(w.prefix, ws) });
    try {
      return await q.getJob(jobIdFor(deliveryId(body), handler));
    } finally {
      await q.close();
    }
  };

  it("verifies with the path's workspace's secrets only; an unknown id or the bare path is 404 without listing ids", async () => {
    const body = messageBody('message.received', 9_001, 'signed');
    expect((await post('/other', body, SECRET.acme)).status).toBe(401);
    expect((await post('/acme', body, SECRET.other)).status).toBe(401);
    const unknown = await post('/nobody', body, SECRET.acme);
    expect(unknown.status).toBe(404);
    const said = (await unknown.json()) as { error: string; message: string };
    expect(said.error).toBe('unknown_workspace');
    expect(said.message).toContain('"nobody"');
    expect(JSON.stringify(said)).not.toMatch(/acme|other/);
    const bare = await post('', body, SECRET.acme);
    expect(bare.status).toBe(404);
    const bareSaid = JSON.stringify(await bare.json());
    expect(bareSaid).toContain('/webhooks/<id>');
    expect(bareSaid).not.toMatch(/acme|other/);
    // Both refusals are logged, as the route's others are.
    const refused = w.lines.filter((l) => l.includes('"outcome":"no_workspace"')).map((l) => (JSON.parse(l) as { reason: string }).reason);
    expect(refused).toEqual(['unknown_workspace', 'workspace_required']);
    expect((await deliver('acme', body)).status).toBe(202);
    // The body limit and health hold on a workspace's path as on the bare one.
    expect((await deliver('other', 'x'.repeat(5_000))).status).toBe(413);
    const ready = await fetch(`${w.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', redis: 'ok', spool: { segments: 0 } });
    // Its capture goes to the workspace's own folder, its path in the fixture.
    const captured = await waitFor(
      () => (existsSync(join(dir, 'capture', 'acme')) ? readdirSync(join(dir, 'capture', 'acme')) : []).find((f) => f.endsWith('.json')),
      10_000,
    );
    expect(JSON.parse(readFileSync(join(dir, 'capture', 'acme', captured), 'utf8'))).toMatchObject({ path: '/webhooks/acme' });
    expect(existsSync(join(dir, 'capture', 'other'))).toBe(false);
    // Each workspace's receiver line names it.
    expect(w.lines.filter((l) => l.includes('receiver listening')).map((l) => (JSON.parse(l) as { workspace?: string }).workspace)).toEqual(
      ['acme', 'other'],
    );
  });

  it('the same delivery to both workspaces is new in each (its own dedupe and change claim) and runs in each', async () => {
    const body = messageBody('message.received', 9_002, 'same');
    expect((await deliver('acme', body)).status).toBe(202);
    expect((await deliver('other', body)).status).toBe(202);
    expect((await deliver('acme', body)).status).toBe(200);
    await waitFor(async () => (await written('acme')).includes('count 9002 1 same'), 15_000);
    await waitFor(async () => (await written('other')).includes('count 9002 1 same'), 15_000);
  }, 40_000);

  it("never shares an order line or a state: B's run passes A's held line, and each counts its own", async () => {
    const conv = 9_003;
    let open: () => void = () => undefined;
    g.__syWsGate = new Promise<void>((r) => (open = r));
    g.__syWsHeld = [];
    const held = messageBody('message.received', conv, 'hold');
    expect((await deliver('acme', held)).status).toBe(202);
    await waitFor(() => g.__syWsHeld?.length === 1, 15_000);
    // A's line for the conversation is held; B's run of the same conversation does not wait behind it.
    expect((await deliver('other', messageBody('message.received', conv, 'b1'))).status).toBe(202);
    await waitFor(async () => (await written('other')).includes(`count ${conv} 1 b1`), 15_000);
    expect((await written('acme')).filter((n) => n.startsWith(`count ${conv} `))).toEqual([]);
    open();
    await waitFor(async () => (await written('acme')).includes(`count ${conv} 1 hold`), 15_000);
    // Each workspace's state counts its own runs only.
    expect((await deliver('acme', messageBody('message.received', conv, 'a2'))).status).toBe(202);
    await waitFor(async () => (await written('acme')).includes(`count ${conv} 2 a2`), 15_000);
    expect((await deliver('other', messageBody('message.received', conv, 'b2'))).status).toBe(202);
    await waitFor(async () => (await written('other')).includes(`count ${conv} 2 b2`), 15_000);
  }, 60_000);

  it("never shares a wait: B's event answers B's parked run only", async () => {
    const conv = 9_004;
    const closedA = conversationBody('conversation.closed', conv, null);
    const closedB = conversationBody('conversation.closed', conv, null);
    expect((await deliver('acme', closedA)).status).toBe(202);
    expect((await deliver('other', closedB)).status).toBe(202);
    const parked = async (ws: Ws, body: string) => Boolean(await (await handlerJob(ws, body, 'ws-reply'))?.isDelayed());
    await waitFor(() => parked('acme', closedA), 15_000);
    await waitFor(() => parked('other', closedB), 15_000);
    expect((await deliver('other', messageBody('message.sent', conv, 'from-b'))).status).toBe(202);
    await waitFor(async () => (await written('other')).includes(`reply ${conv} from-b`), 15_000);
    expect(await parked('acme', closedA)).toBe(true);
    expect((await deliver('acme', messageBody('message.sent', conv, 'from-a'))).status).toBe(202);
    await waitFor(async () => (await written('acme')).includes(`reply ${conv} from-a`), 15_000);
    expect((await written('acme')).filter((n) => n.startsWith(`reply ${conv} `))).toEqual([`reply ${conv} from-a`]);
    expect((await written('other')).filter((n) => n.startsWith(`reply ${conv} `))).toEqual([`reply ${conv} from-b`]);
  }, 60_000);

  it('labels the series with the workspace they count', async () => {
    const samples = parseSamples(await w.service.metrics.scrape());
    const v = (name: string, labels: Record<string, string>) => valueOf(samples, name, labels);
    // Everything delivered above: acme 6 accepted, 1 repeat, 1 refused signature; other 5 accepted, 1 refused.
    expect(v('switchyard_deliveries_total', { outcome: 'accepted', workspace: 'acme' })).toBe(6);
    expect(v('switchyard_deliveries_total', { outcome: 'duplicate', workspace: 'acme' })).toBe(1);
    expect(v('switchyard_deliveries_total', { outcome: 'bad_signature', workspace: 'acme' })).toBe(1);
    expect(v('switchyard_deliveries_total', { outcome: 'accepted', workspace: 'other' })).toBe(5);
    expect(v('switchyard_deliveries_total', { outcome: 'duplicate', workspace: 'other' })).toBe(0);
    expect(v('switchyard_deliveries_total', { outcome: 'bad_signature', workspace: 'other' })).toBe(1);
    expect(samples.some((x) => x.labels['workspace'] === 'default')).toBe(false);
    // ws-count ran for acme's 4 inbound messages and other's 3.
    expect(v('switchyard_handler_runs_total', { handler: 'ws-count', outcome: 'completed', workspace: 'acme' })).toBe(4);
    expect(v('switchyard_handler_runs_total', { handler: 'ws-count', outcome: 'completed', workspace: 'other' })).toBe(3);
    for (const workspace of ['acme', 'other']) {
      expect(v('switchyard_queue_jobs', { queue: 'events', state: 'completed', workspace })).toBeGreaterThan(0);
      expect(v('switchyard_ingest_inbox_length', { workspace })).toBe(0);
    }
  });
});
