/**
 * Two workspaces in one deployment (WORKSPACES_FILE), and the worker process SIGKILLed during A's flood.
 * Workspace A sends 2 000 deliveries, B 50 (B's start once A's flood is running); each run writes one note
 * with its workspace's token and lingers (NOTE_SLEEP_MS), so at the kill runs of both have written and not
 * completed. A new worker takes over. Counted at the sandbox (its request log, over HTTP from the workers):
 * every delivery of each workspace is written exactly once (a fresh 201, not an idempotent replay), with its
 * own workspace's token, and nothing else is written.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tokenHash } from '../../../src/sandbox/tokens.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { deliveryId, messageBody } from '../../support/events.js';
import { createRig, sendAll, sleep, TEST_HANDLERS, type Rig, type Send } from '../../support/faults/rig.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { T } from '../../support/sandbox.js';
import { TEST_SECRET } from '../../support/service.js';
import { freePort } from '../../../src/redis/managed.js';

const A_DELIVERIES = 2_000;
const B_DELIVERIES = 50;

describe('a deployment of two workspaces with its worker SIGKILLed during one workspace flood', () => {
  let rig: Rig | undefined;
  const procs: CliProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-ws-kill-'));
  afterAll(async () => {
    await Promise.allSettled(procs.map((p) => p.stop('SIGKILL', 5_000)));
    await rig?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`loses and doubles nothing of B's ${B_DELIVERIES} nor A's ${A_DELIVERIES}`, async () => {
    const prefix = uniquePrefix('wskill');
    rig = await createRig({ prefix, redisUrl: testRedisUrl() });
    const convB = await firstConversation(rig.api.baseUrl, T.other);
    const file = join(dir, 'workspaces.json');
    const ws = (id: string, token: string) => ({ id, apiUrl: rig!.api.baseUrl, token, secrets: [TEST_SECRET], burst: 10_000 });
    writeFileSync(file, JSON.stringify({ workspaces: [ws('a', T.full), ws('b', T.other)] }));
    const common = { REDIS_URL: rig.redisUrl, QUEUE_PREFIX: prefix, WORKSPACES_FILE: file, SHUTDOWN_TIMEOUT: '3s', LOG_LEVEL: 'info' };
    const port = await freePort();
    const receiver = runCli(['serve'], { ...common, PORT: String(port), HOST: '127.0.0.1' });
    procs.push(receiver);
    await receiver.waitFor(/receiver listening/, 20_000);
    const worker = () => {
      const p = runCli(['work'], {
        ...common,
        HANDLERS_DIR: TEST_HANDLERS,
        WORKER_CONCURRENCY: '16',
        JOB_LOCK_DURATION: '1s',
        NOTE_SLEEP_MS: '100',
      });
      procs.push(p);
      return p;
    };
    const urls = [`http://127.0.0.1:${port}/webhooks/a`, `http://127.0.0.1:${port}/webhooks/b`];
    const sendsOf = (n: number, conv: number, to: number): Send[] =>
      Array.from({ length: n }, (_, i) => {
        const body = messageBody('message.received', conv, `ws ${to} #${i}`);
        return { id: deliveryId(body), body, to };
      });
    const a = sendsOf(A_DELIVERIES, rig.conv, 0);
    const b = sendsOf(B_DELIVERIES, convB, 1);

    const first = worker();
    await first.waitFor(/worker started/, 20_000);
    const flood = sendAll(a, () => urls, { concurrency: 16 });
    const writes = () => (rig!.collector.harvest(), rig!.collector.writesById());
    await waitUntil(() => countOf(writes(), a) >= 100, 60_000);
    const bSent = sendAll(b, () => urls, { concurrency: 4 });
    // Kill once B's runs are under way too (some written, the flood far from done).
    await waitUntil(() => countOf(writes(), b) >= 5, 60_000);
    const atKill = { a: countOf(writes(), a), b: countOf(writes(), b) };
    expect(await first.stop('SIGKILL')).toBeNull();
    await sleep(200);
    const second = worker();
    await second.waitFor(/worker started/, 20_000);
    const [aAcked, bAcked] = await Promise.all([flood, bSent]);
    expect({ a: aAcked.acked.size, b: bAcked.acked.size }).toEqual({ a: A_DELIVERIES, b: B_DELIVERIES });

    await waitUntil(() => countOf(writes(), a) === A_DELIVERIES && countOf(writes(), b) === B_DELIVERIES, 180_000);
    // Late repeats (a stalled run taken again) show up here.
    await sleep(2_500);
    rig.collector.harvest();
    expect(rig.collector.overflowed).toBe(false);
    const fresh = rig.collector.entries().filter((e) => e.status === 201 && !e.replay);
    const byId = new Map<string, { n: number; tokens: Set<string> }>();
    for (const e of fresh) {
      const id = String((e.body as { body?: string }).body).replace(/^seen /, '');
      const seen = byId.get(id) ?? { n: 0, tokens: new Set<string>() };
      seen.n++;
      seen.tokens.add(e.token?.hash ?? '');
      byId.set(id, seen);
    }
    const report = (sends: Send[], token: string) => ({
      lost: sends.filter((s) => !byId.has(s.id)).length,
      twice: sends.filter((s) => (byId.get(s.id)?.n ?? 0) > 1).length,
      otherToken: sends.filter((s) => byId.has(s.id) && ![...(byId.get(s.id)?.tokens ?? [])].every((h) => h === tokenHash(token))).length,
    });
    const replays = rig.collector.entries().filter((e) => e.replay).length;
    console.log(`[faults] workspaces kill: at the kill a=${atKill.a} b=${atKill.b} written; idempotent replays after=${replays}`);
    expect({ b: report(b, T.other), a: report(a, T.full) }).toEqual({
      b: { lost: 0, twice: 0, otherToken: 0 },
      a: { lost: 0, twice: 0, otherToken: 0 },
    });
    expect(fresh.length).toBe(A_DELIVERIES + B_DELIVERIES);
    // The kill came while both workspaces had runs to do.
    expect(atKill.a).toBeLessThan(A_DELIVERIES);
    expect(atKill.b).toBeLessThan(B_DELIVERIES);
  }, 240_000);
});

async function firstConversation(baseUrl: string, token: string): Promise<number> {
  const r = await fetch(`${baseUrl}/conversations`, { headers: { authorization: `Bearer ${token}` } });
  return ((await r.json()) as { data: { id: number }[] }).data[0]?.id as number;
}

function countOf(written: Map<string, number>, sends: Send[]): number {
  return sends.filter((s) => written.has(s.id)).length;
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(50);
  }
}
