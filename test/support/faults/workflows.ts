/**
 * Fault scenarios of durable workflows (sleep, waitForEvent, cancelOn) with
 * real processes: the fixtures of `handlers/workflow-faults/` run in `switchyard
 * work`/`start` processes and append what they reach to a file (a line written
 * before a SIGKILL survives it), and write notes to the rig's sandbox
 * conversation (`before <id>`, `after <id> …`), so a test counts, per run:
 * how often its step ran, how often it woke, and how many fresh (non-replayed)
 * writes the sandbox took before and after the wait.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Job } from 'bullmq';
import { jobIdFor } from '../../../src/events/envelope.js';
import { RunRecords, type ParkedRun } from '../../../src/queue/waits/runs.js';
import { openHandlerQueues, handlerQueueList } from '../../../src/queue/queues.js';
import { deliver } from '../service.js';
import { conversationBody, deliveryId, messageBody } from '../events.js';
import { afterEach } from 'vitest';
import { testRedisUrl, uniquePrefix } from '../redis.js';
import { waitFor } from '../wait.js';
import { createRig, type Rig } from './rig.js';

export const WFF_HANDLERS = fileURLToPath(new URL('../handlers/workflow-faults', import.meta.url));

export const HANDLER = { sleeper: 'wff-sleeper', waiter: 'wff-waiter', cancel: 'wff-cancel' } as const;
export const TRIGGER = { sleeper: 'conversation.opened', waiter: 'conversation.closed', cancel: 'conversation.assigned' } as const;
export type Kind = keyof typeof HANDLER;

export interface Mark {
  h: string;
  at: string;
  id: string;
  got?: string;
  t: number;
  pid: number;
}

/** The fixtures' log file and what it holds. */
export class MarkLog {
  readonly dir = mkdtempSync(join(tmpdir(), 'sy-wff-'));
  readonly file = join(this.dir, 'marks.jsonl');

  all(): Mark[] {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    // A SIGKILL cannot tear an appendFileSync of one short line, but keep parsing robust anyway.
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Mark];
        } catch {
          return [];
        }
      });
  }

  of(id: string, at?: string): Mark[] {
    return this.all().filter((m) => m.id === id && (at === undefined || m.at === at));
  }

  count(id: string, at: string): number {
    return this.of(id, at).length;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The environment of a worker (or `start`) process running the fixtures. */
export function wffEnv(rig: Rig, log: MarkLog, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HANDLERS_DIR: WFF_HANDLERS,
    WFF_LOG: log.file,
    WFF_NOTE_CONV: String(rig.conv),
    JOB_LOCK_DURATION: '2s',
    WORKER_CONCURRENCY: '8',
    ...extra,
  };
}

/** A trigger of `kind` for match conversation `conv` (any number: notes go to the rig's conversation); its delivery id. */
export function trigger(kind: Kind, conv: number): { id: string; body: string } {
  const body = conversationBody(TRIGGER[kind], conv, `wff ${kind}`);
  return { id: deliveryId(body), body };
}

/** An inbound message of conversation `conv` (answers waiters, cancels cancellers of it). */
export function reply(conv: number, text = 'reply'): { id: string; body: string } {
  const body = messageBody('message.received', conv, text);
  return { id: deliveryId(body), body };
}

/** POSTs a signed delivery; fails unless the receiver accepted it (202, or 200 for a duplicate). */
export async function post(url: string, body: string): Promise<void> {
  const r = await deliver(url, body);
  if (r.status !== 202 && r.status !== 200) throw new Error(`delivery answered ${r.status}: ${await r.text()}`);
}

/** Fresh (non-replayed) 201 notes per note body, and every notes call per body (replays included). */
export function noteWrites(rig: Rig): { fresh: Map<string, number>; calls: Map<string, { n: number; keys: Set<string | null> }> } {
  rig.collector.harvest();
  const fresh = new Map<string, number>();
  const calls = new Map<string, { n: number; keys: Set<string | null> }>();
  for (const e of rig.collector.entries()) {
    const body = (e.body as { body?: string } | null)?.body ?? '';
    const c = calls.get(body) ?? { n: 0, keys: new Set() };
    c.n++;
    c.keys.add(e.idempotency_key);
    calls.set(body, c);
    if (e.status === 201 && !e.replay) fresh.set(body, (fresh.get(body) ?? 0) + 1);
  }
  return { fresh, calls };
}

/** Fresh writes whose note body starts with `prefix` (`after <id>` matches `after <id> <reply id>`). */
export function freshWrites(rig: Rig, prefix: string): number {
  let n = 0;
  for (const [body, c] of noteWrites(rig).fresh) if (body === prefix || body.startsWith(`${prefix} `)) n += c;
  return n;
}

/** A short-lived view of the rig's Redis: parked runs, handler jobs. */
export class WfRedis {
  readonly redis: Redis;
  private readonly queues;

  constructor(
    url: string,
    readonly prefix: string,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
    this.redis.on('error', () => undefined);
    this.queues = openHandlerQueues(this.redis, prefix);
    // Redis may be away on purpose (a restart scenario): no unhandled 'error' noise.
    for (const q of handlerQueueList(this.queues)) q.on('error', () => undefined);
  }

  async parked(): Promise<ParkedRun[]> {
    return new RunRecords(this.redis, this.prefix).parked();
  }

  /** The handler job of a delivery (any priority queue). */
  async job(deliveryKey: string, kind: Kind): Promise<Job | undefined> {
    const id = jobIdFor(deliveryKey, HANDLER[kind]);
    for (const q of handlerQueueList(this.queues)) {
      const j = await Job.fromId(q, id);
      if (j) return j;
    }
    return undefined;
  }

  async state(deliveryKey: string, kind: Kind): Promise<string> {
    const j = await this.job(deliveryKey, kind);
    return j ? await j.getState() : 'missing';
  }

  async failed(): Promise<number> {
    let n = 0;
    for (const q of handlerQueueList(this.queues)) n += await q.getFailedCount();
    return n;
  }

  async close(): Promise<void> {
    await Promise.allSettled(handlerQueueList(this.queues).map((q) => q.close()));
    this.redis.disconnect();
  }
}

/** One workflow fault test's world: a rig on a fresh prefix, the fixtures' mark log, a view of the waits in Redis. */
export interface WfScene {
  readonly prefix: string;
  readonly rig: Rig;
  readonly log: MarkLog;
  readonly wf: WfRedis;
}

/**
 * Call once in a `describe`: each test opens its scene (`label` names the prefix; `redisUrl`
 * defaults to the test Redis) and it is closed after the test, before the file's own
 * `afterEach` hooks registered earlier (vitest runs them as a stack).
 */
export function workflowScenes(): (label: string, redisUrl?: string) => Promise<WfScene> {
  let open: WfScene | undefined;
  afterEach(async () => {
    const scene = open;
    open = undefined;
    if (!scene) return;
    await scene.rig.close();
    await scene.wf.close();
    scene.log.remove();
  });
  return async (label, redisUrl = testRedisUrl()) => {
    const prefix = uniquePrefix(label);
    const rig = await createRig({ prefix, redisUrl });
    open = { prefix, rig, log: new MarkLog(), wf: new WfRedis(redisUrl, prefix) };
    return open;
  };
}

/** Resolves once every delivery of `ids` has its run parked (15 s at most). */
export async function parkedAll(w: WfRedis, ids: readonly string[]): Promise<void> {
  await waitFor(
    async () => {
      const parked = new Set((await w.parked()).map((p) => p.deliveryKey));
      return ids.every((id) => parked.has(id));
    },
    15_000,
    50,
  );
}
