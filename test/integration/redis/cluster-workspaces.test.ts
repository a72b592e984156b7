/**
 * Many workspaces on Redis Cluster (issue 35, item 7): each workspace's Config (workspaceConfig) keys everything
 * under its hash-tagged prefix `{<base>:<id>}`, so every script of a workspace touches one slot (no CROSSSLOT), and
 * different workspaces fall on different slots, spread over the masters. Each workspace's data path runs here on a
 * three-master cluster: webhook route and ingest store (dedupe), the pump into `events`, the worker's fan-out
 * (change claims, waits), an ordered handler run that keeps ctx.state, sleeps (parks and is woken) and writes in a
 * step, a run waiting for an event and woken by it, a schedule's runs, the API limiter, the history.
 */
import { fileURLToPath } from 'node:url';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config/index.js';
import { loadHandlerDir } from '../../../src/handler/loader.js';
import { HandlerSet, handlerSnapshot } from '../../../src/handler/set.js';
import { startService, type RunningService } from '../../../src/runtime/service.js';
import { startWorker } from '../../../src/runtime/worker.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { startTestCluster, type TestCluster } from '../../support/cluster.js';
import { conversationBody, messageBody } from '../../support/events.js';
import { Queue } from 'bullmq';
import { SCHEDULES_QUEUE } from '../../../src/queue/names.js';
import { deliver, memoryLogger, waitFor } from '../../support/service.js';
import { workspaceSecret, workspacesDeployment } from '../../support/workspaces.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/cluster-workspaces', import.meta.url));
const BASE = 'sy-cw';
// Their hash tags `sy-cw:<id>` fall in the three masters' slot ranges (0-5460, 5461-10922, 10923-16383).
const IDS = ['acme', 'beta', 'delta'];

describe('many workspaces on Redis Cluster', () => {
  let cluster: TestCluster;
  let api: RunningSandbox;
  let redis: Cluster;
  let configs: Config[];
  /** Each workspace's service and its log lines. */
  const parts: { service: RunningService; lines: string[] }[] = [];

  beforeAll(async () => {
    cluster = await startTestCluster();
    api = await createSandbox({ burst: 1000 }).listen(0);
    ({ configs } = workspacesDeployment(
      IDS,
      { REDIS_URL: cluster.url, QUEUE_PREFIX: BASE, HANDLERS_DIR: HANDLERS },
      { url: api.baseUrl, token: 'sbx_full_acme' },
    ));
    const dir = await loadHandlerDir(HANDLERS);
    const handlers = dir.handlers.map((l) => l.handler);
    const schedules = dir.schedules.map((l) => l.schedule);
    // One service per workspace Config, as the runtime starts each workspace's part of one process.
    for (const config of configs) {
      const { log, lines } = memoryLogger();
      const service = await startService({
        config,
        log,
        receiver: true,
        worker: async ({ redisUrl, queues, hooks }) =>
          startWorker({ config, redisUrl, log, hooks, set: new HandlerSet(handlerSnapshot(handlers, undefined, {}, schedules)) }, queues),
      });
      parts.push({ service, lines });
    }
    const nodes = cluster.url
      .replace('redis+cluster://', '')
      .split(',')
      .map((h) => ({ host: h.split(':')[0] as string, port: Number(h.split(':')[1]) }));
    redis = new Cluster(nodes);
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(parts.map((p) => p.service.close()));
    redis?.disconnect();
    await api?.close();
    await cluster?.stop();
  });

  const notes = async (): Promise<string[]> =>
    (
      (await (await fetch(`${api.url}/_sandbox/requests?method=POST&path=/conversations/*/notes`)).json()) as {
        data: { status: number; body: { body: string } }[];
      }
    ).data
      .filter((r) => r.status === 201)
      .map((r) => r.body.body);

  it('runs each workspace’s data path on the cluster: no CROSSSLOT, every key in its workspace’s slot, workspaces on several masters', async () => {
    const conv = 38;
    // The same conversation in every workspace, twice each (two runs in one order line, one state per workspace),
    // and each delivery sent twice (the second is a duplicate).
    for (const [i, config] of configs.entries()) {
      const url = `${parts[i]?.service.receiver?.http.url}${config.webhookPath}`;
      for (const text of ['one', 'two']) {
        const body = messageBody('message.received', conv, `${config.workspaceId} ${text}`);
        expect((await deliver(url, body, workspaceSecret(config.workspaceId))).status).toBe(202);
        expect((await deliver(url, body, workspaceSecret(config.workspaceId))).status).toBe(200);
      }
      // A run waiting for the conversation's next message.sent, and once it waits (the first wait for a name
      // looks back no further than its registration: src/worker/waits.ts), that message.
      const opened = conversationBody('conversation.opened', conv, `${config.workspaceId} subject`);
      expect((await deliver(url, opened, workspaceSecret(config.workspaceId))).status).toBe(202);
      await waitFor(() => parts[i]?.lines.some((l) => l.includes('"handler":"cw-waiter"') && l.includes('"msg":"run parked"')), 15_000);
      const sent = messageBody('message.sent', conv, `${config.workspaceId} reply`);
      expect((await deliver(url, sent, workspaceSecret(config.workspaceId))).status).toBe(202);
    }
    // Two runs per workspace, each counting in that workspace's own state: runs 1 and 2 in each.
    // And one reply noted per workspace.
    await waitFor(async () => (await notes()).length >= 3 * IDS.length, 30_000, 100);
    const written = await notes();
    expect(written).toHaveLength(3 * IDS.length);
    expect(written.filter((n) => n.startsWith('run 1 ')).length).toBe(IDS.length);
    expect(written.filter((n) => n.startsWith('run 2 ')).length).toBe(IDS.length);
    expect(written.filter((n) => n === 'replied').length).toBe(IDS.length);
    // The schedule ran in every workspace, on its own `schedules` queue.
    for (const c of configs) {
      const q = new Queue(SCHEDULES_QUEUE, { connection: redis, prefix: c.queuePrefix });
      try {
        await waitFor(async () => (await q.getCompletedCount()) >= 1, 15_000, 100);
      } finally {
        await q.close();
      }
    }

    // No script or command of any workspace failed (keys in several slots: CROSSSLOT), nor anything else warned.
    const logged = parts.flatMap((p) => p.lines);
    expect(logged.join('\n')).not.toMatch(/CROSSSLOT|MOVED|ASK /);
    expect(logged.filter((l) => /"level":(40|50|60)/.test(l))).toEqual([]);

    // Every key on every master belongs to one workspace and lies in that workspace's slot.
    const slotOf = async (key: string) => Number(await redis.cluster('KEYSLOT', key));
    const slots = new Map<string, number>();
    for (const c of configs) slots.set(c.workspaceId, await slotOf(c.queuePrefix));
    const keys: string[] = [];
    for (const node of redis.nodes('master')) {
      let cursor = '0';
      do {
        const [next, batch] = await node.scan(cursor, 'COUNT', 1000);
        keys.push(...batch);
        cursor = next;
      } while (cursor !== '0');
    }
    expect(keys.length).toBeGreaterThan(IDS.length * 5);
    const outside = keys.filter((k) => !configs.some((c) => k.startsWith(c.queuePrefix)));
    expect(outside).toEqual([]);
    for (const c of configs) {
      const own = keys.filter((k) => k.startsWith(c.queuePrefix));
      expect(own.length).toBeGreaterThan(5);
      const wrong = [];
      for (const k of own) if ((await slotOf(k)) !== slots.get(c.workspaceId)) wrong.push(k);
      expect(wrong).toEqual([]);
    }

    // The workspaces' slots differ and are served by at least two different masters.
    expect(new Set(slots.values()).size).toBe(IDS.length);
    const ranges = await redis.cluster('SLOTS');
    const masterOf = (slot: number) => {
      const [, , master] = ranges.find(([from, to]) => slot >= from && slot <= to) ?? [];
      return master ? `${master[0]}:${master[1]}` : undefined;
    };
    const masters = new Set([...slots.values()].map(masterOf));
    expect(masters.has(undefined)).toBe(false);
    expect(masters.size).toBeGreaterThanOrEqual(2);
  }, 90_000);
});
