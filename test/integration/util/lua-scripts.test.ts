import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITER_SCRIPTS, limiterScripts } from '../../../src/api/rate-limiter-lua.js';
import { QUEUE_SCRIPTS, queueScripts } from '../../../src/queue/scripts.js';
import { OrderGate, type QueuedJob } from '../../../src/queue/order.js';
import { ChangeClaims } from '../../../src/queue/change.js';
import { DebounceBursts } from '../../../src/queue/debounce.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import { closeRedis, createRedisConnection, type RedisClient } from '../../../src/redis/connection.js';
import { LuaScriptError, LuaScripts } from '../../../src/util/lua.js';
import { startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { startTestCluster, type TestCluster } from '../../support/cluster.js';

const ALL = [...LIMITER_SCRIPTS.scripts.values(), ...QUEUE_SCRIPTS.scripts.values()];
const sha = (lua: string) => createHash('sha1').update(lua).digest('hex');

/** The servers behind a client: one, or every Cluster master. */
function servers(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

async function flushScripts(redis: RedisClient): Promise<void> {
  for (const node of servers(redis)) await node.script('FLUSH');
}

/** How many of the servers hold the script. */
async function holding(redis: RedisClient, lua: string): Promise<number> {
  let n = 0;
  for (const node of servers(redis)) n += ((await node.script('EXISTS', sha(lua))) as number[])[0] ?? 0;
  return n;
}

/**
 * Every script, run once, then again after SCRIPT FLUSH emptied the server's
 * script cache (as a restart or failover to a fresh replica does); the second
 * run must still work (ioredis answers NOSCRIPT by sending the script again).
 * All keys share one hash tag so the multi-key scripts also run on Cluster.
 */
function exercise(connect: () => RedisClient) {
  const tag = `{lua-${Math.random().toString(36).slice(2, 8)}}`;
  const limiterKeys = {
    window: `${tag}:window`,
    pause: `${tag}:pause`,
    quota: `${tag}:quota`,
    cap: `${tag}:cap`,
    waiters: `${tag}:waiters`,
    seen: `${tag}:seen`,
    share: `${tag}:share`,
  };
  const q = { inbox: `${tag}:inbox`, inflight: `${tag}:inflight:p1`, heartbeat: `${tag}:heartbeat:p1`, pumps: `${tag}:pumps` };
  const item = (k: string) => ({ dedupeKey: `${tag}:dedupe:${k}`, payload: `payload-${k}`, receivedAt: '2024-01-01T00:00:00.000Z' });
  const quotaReset = Date.now() + 600_000;
  const run = (n: number): QueuedJob & { data: HandlerJobData & { order: NonNullable<HandlerJobData['order']> } } => {
    const data = {
      key: `evt_${n}`,
      handlerId: 'h',
      receivedAt: '2024-01-01T00:00:00.000Z',
      event: { id: `evt_${n}`, name: 'message.received' as const, createdAt: null, data: {} },
      order: { key: 'conversation:1', member: `00000000000000${n}|j${n}`, at: 1_000 + n },
    };
    return { priority: 'normal', name: 'h', data, opts: { jobId: `j${n}` } };
  };
  const added: string[] = [];
  const add = async (j: QueuedJob) => {
    added.push(j.opts.jobId);
  };

  // Two rounds per script, each with what it must answer; round 2 runs after the flush.
  type Runs = (redis: RedisClient) => [() => Promise<void>, () => Promise<void>];
  const runs: Record<string, Runs> = {
    rateAcquire: (redis) => {
      const s = limiterScripts(redis, limiterKeys);
      const acquire = (member: string) =>
        s.acquire({
          burst: 5,
          windowMs: 10_000,
          member,
          inflightMs: 60_000,
          level: 1,
          score: '',
          proc: 'p',
          staleMs: 3_000,
          due: 8,
          pace: 1,
        });
      const granted = async (member: string) => expect((await acquire(member)).slice(0, 2)).toEqual([1, 0]);
      return [
        () => granted('m1'),
        async () => {
          await granted('m2');
          expect(await redis.zcard(limiterKeys.window)).toBe(2);
        },
      ];
    },
    rateEnqueue: (redis) => {
      const s = limiterScripts(redis, limiterKeys);
      const enqueue = async (member: string) => {
        expect(await s.enqueue(member, 2, 'p', 3_000)).toBeGreaterThan(2 * 1e13);
        expect(await redis.zscore(limiterKeys.waiters, member)).not.toBeNull();
      };
      return [() => enqueue('w1'), () => enqueue('w2')];
    },
    rateDone: (redis) => {
      const s = limiterScripts(redis, limiterKeys);
      const done = async (member: string) => {
        expect(await s.done(member)).toBe(1);
        expect(Number(await redis.zscore(limiterKeys.window, member))).toBeLessThanOrEqual(Date.now() + 1_000);
      };
      return [() => done('m1'), () => done('m2')];
    },
    rateObserve: (redis) => {
      const s = limiterScripts(redis, limiterKeys);
      // The service saw 4 of its 5 used; 2 of them are ours, so 2 are counted as used by others, once.
      const observe = () =>
        s.observe({
          burst: 5,
          windowMs: 10_000,
          limit: 5,
          remaining: 1,
          acquiredAtMs: Date.now(),
          phantomPrefix: 'phantom:x',
          quotaRemaining: '',
          quotaResetMs: '',
        });
      return [async () => expect(await observe()).toBe(2), async () => expect(await observe()).toBe(0)];
    },
    ratePause: (redis) => {
      const s = limiterScripts(redis, limiterKeys);
      return [
        async () => {
          expect(await s.pause(1_000)).toBe(1);
          expect(await redis.pttl(limiterKeys.pause)).toBeGreaterThan(0);
        },
        async () => {
          expect(await s.pause(60_000)).toBe(1);
          expect(await redis.pttl(limiterKeys.pause)).toBeGreaterThan(1_000);
        },
      ];
    },
    rateQuota: (redis) => {
      const s = limiterScripts(redis, limiterKeys);
      const quota = async () => {
        expect(await s.quota(quotaReset)).toBe(1);
        expect(await redis.get(limiterKeys.quota)).toBe(String(quotaReset));
      };
      return [quota, quota];
    },
    ingestBatch: (redis) => {
      const s = queueScripts(redis);
      const k = { inbox: q.inbox, pending: `${tag}:pending`, dedupePrefix: `${tag}:dedupe:` };
      return [
        async () => expect(await s.ingestBatch(k, [item('a'), item('b'), item('a')], 60_000)).toBe('110'),
        async () => {
          expect(await s.ingestBatch(k, [item('b'), item('c')], 60_000)).toBe('01');
          // Accepted and not fanned out yet: marked pending by delivery key, at its receipt.
          expect(await redis.zrange(k.pending, '0', '-1', 'WITHSCORES')).toEqual([
            'a',
            '1704067200000',
            'b',
            '1704067200000',
            'c',
            '1704067200000',
          ]);
        },
      ];
    },
    pumpTakeMore: (redis) => {
      const s = queueScripts(redis);
      return [
        async () => expect(await s.pumpTakeMore(q.inbox, q.inflight, 1)).toEqual(['payload-a']),
        async () => expect(await s.pumpTakeMore(q.inbox, q.inflight, 5)).toEqual(['payload-a', 'payload-b', 'payload-c']),
      ];
    },
    orderEnqueue: (redis) => {
      const gate = new OrderGate(redis, tag, { doneTtlMs: 60_000 });
      return [
        async () => {
          expect(await gate.enqueue(run(1), run(1).data.order)).toBe('add');
          expect(await gate.enqueue(run(1), run(1).data.order)).toBe('add');
        },
        async () => expect(await gate.enqueue(run(2), run(2).data.order)).toBe('wait'),
      ];
    },
    orderClaim: (redis) => {
      const gate = new OrderGate(redis, tag, { doneTtlMs: 60_000 });
      return [
        async () => expect(await gate.claim(run(1).data, 'j1', add)).toEqual({ kind: 'run', lastAppliedAt: null }),
        async () => expect(await gate.claim(run(2).data, 'j2', add)).toEqual({ kind: 'park' }),
      ];
    },
    orderRelease: (redis) => {
      const gate = new OrderGate(redis, tag, { doneTtlMs: 60_000 });
      return [
        async () => {
          await gate.release(run(1).data, 'j1', 'completed', add);
          expect(added).toEqual(['j2']);
          // The run finished: a repeated fan-out adds nothing, a re-run of it completes at once and re-adds the head.
          expect(await gate.enqueue(run(1), run(1).data.order)).toBe('done');
          expect(await gate.claim(run(1).data, 'j1', add)).toEqual({ kind: 'completed' });
          expect(added).toEqual(['j2', 'j2']);
        },
        async () => {
          await gate.release(run(2).data, 'j2', 'completed', add);
          expect(await gate.backlog('h')).toEqual({ keys: 0, pending: 0, longest: 0 });
        },
      ];
    },
    debounceAdd: (redis) => {
      const bursts = new DebounceBursts(redis, tag, 60_000);
      const d = run(1).data;
      return [
        async () => expect((await bursts.add(d, 'r1', 'contact:1', 1, 5_000, 20_000)).kind).toBe('open'),
        async () => {
          expect((await bursts.add({ ...d, key: 'evt_2' }, 'r2', 'contact:1', 2, 5_000, 20_000)).kind).toBe('folded');
          expect((await bursts.add({ ...d, key: 'evt_2' }, 'r2', 'contact:1', 2, 5_000, 20_000)).kind).toBe('repeat');
        },
      ];
    },
    debounceTake: (redis) => {
      const bursts = new DebounceBursts(redis, tag, 60_000);
      return [
        async () => expect((await bursts.take('h', { key: 'contact:1' }, 'nobody')).kind).toBe('gone'),
        async () => expect((await bursts.take('h', { key: 'contact:9' }, 'nobody')).kind).toBe('gone'),
      ];
    },
    fanOutCheck: (redis) => {
      const claims = new ChangeClaims(redis, tag, 60_000);
      const who = (deliveryKey: string) => ({ deliveryKey, source: 'webhook', atMs: 1_000 });
      return [
        async () => expect(await claims.claim('lead.won:1', who('evt_1'))).toBe(true),
        async () => {
          expect(await claims.claim('message.received:1', who('evt_1'))).toBe(true);
          expect(await claims.claim('message.received:1', who('evt_2'))).toBe(false);
        },
      ];
    },
    pumpRecover: (redis) => {
      const s = queueScripts(redis);
      return [
        async () => {
          await redis.set(q.heartbeat, '1');
          expect(await s.pumpRecover(q, 'p1')).toBe(-1);
          await redis.del(q.heartbeat);
        },
        async () => {
          expect(await s.pumpRecover(q, 'p1')).toBe(3);
          expect(await redis.lrange(q.inbox, 0, -1)).toEqual(['payload-a', 'payload-b', 'payload-c']);
        },
      ];
    },
  };

  it('a test below covers every registered script', () => {
    expect(Object.keys(runs).sort()).toEqual(ALL.map((s) => s.name).sort());
  });

  it.each(Object.keys(runs))('%s runs, and runs again after SCRIPT FLUSH', async (name) => {
    const script = ALL.find((s) => s.name === name);
    if (!script) throw new Error(`no script ${name}`);
    const redis = connect();
    try {
      const [first, second] = (runs[name] as Runs)(redis);
      await first();
      expect(await holding(redis, script.lua)).toBe(1);
      await flushScripts(redis);
      expect(await holding(redis, script.lua)).toBe(0);
      await second();
      expect(await holding(redis, script.lua)).toBe(1);
    } finally {
      await closeRedis(redis);
    }
  });
}

describe('Lua scripts on a single redis-server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-lua-'));
  let server: ManagedRedis;
  beforeAll(async () => {
    server = await startManagedRedis({ dir });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('each script', () => exercise(() => createRedisConnection(server.url, 'worker')));

  it('a call with the wrong number of keys is refused before it reaches Redis', async () => {
    const redis = new Redis(server.url);
    try {
      const run = QUEUE_SCRIPTS.on(redis);
      await expect(run.pumpRecover(['only-one'])).rejects.toThrow(new LuaScriptError('Lua script pumpRecover takes 4 keys, was given 1'));
    } finally {
      redis.disconnect();
    }
  });

  it('a script named like a member of the client is refused, not defined over it', async () => {
    const scripts = mkdtempSync(join(tmpdir(), 'sy-lua-own-'));
    const redis = new Redis(server.url);
    try {
      writeFileSync(join(scripts, 'get-1.lua'), "return redis.call('GET', KEYS[1])\n");
      const set = new LuaScripts(pathToFileURL(`${scripts}/`), ['get']);
      expect(() => set.on(redis)).toThrow(/cannot define Lua script get: the Redis client already has a member of that name/);
      expect(await redis.get('nothing-here')).toBeNull();
    } finally {
      redis.disconnect();
      rmSync(scripts, { recursive: true, force: true });
    }
  });

  // redis/ioredis#1931: an auto-pipeline made before defineCommand lacks the new script.
  it("a script defined on an auto-pipelined connection after the turn's pipeline was made runs in it, every answer back", async () => {
    const scripts = mkdtempSync(join(tmpdir(), 'sy-lua-late-'));
    const redis = createRedisConnection(server.url, 'worker', 'late-scripts', { autoPipeline: true });
    try {
      await redis.ping();
      writeFileSync(join(scripts, 'lateEcho-1.lua'), "return 'late:' .. KEYS[1]\n");
      const late = new LuaScripts(pathToFileURL(`${scripts}/`), ['lateEcho']);
      // One turn: a command makes the auto-pipeline, then the script is defined and called into that same pipeline.
      const first = redis.set('late-before', '1');
      const calls = late.on(redis);
      const echoed = calls.lateEcho(['k1']);
      const after = redis.get('late-before');
      expect(await Promise.all([first, echoed, after])).toEqual(['OK', 'late:k1', '1']);
    } finally {
      await closeRedis(redis);
      rmSync(scripts, { recursive: true, force: true });
    }
  });
});

describe('Lua scripts on Redis Cluster', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  describe('each script', () => exercise(() => createRedisConnection(cluster.url, 'worker')));
});
