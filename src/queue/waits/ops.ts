import { Job, type Queue } from 'bullmq';
import { matchesWhere, type WhereQuery } from '../../events/index.js';
import type { RedisClient } from '../../redis/index.js';
import { PRIORITIES, sleep } from '../../util/index.js';
import { BullFlowJobs } from '../flow-adapter.js';
import { FlowControl } from '../flow.js';
import type { HandlerJobData } from '../jobs.js';
import { HANDLER_QUEUE_BY_PRIORITY } from '../names.js';
import type { HandlerQueues } from '../queues.js';
import { decodeReached, encodeReached, waitIdsOf } from './reached.js';
import { RunRecords, parkedKey, runKey, type ParkedRun } from './runs.js';
import { WAIT_SCRIPTS } from './wait-store.js';

/**
 * Operating parked runs (`switchyard waits cancel|wake`, the admin's waits
 * page): cancel runs, wake one, list those of handlers no longer loaded. Each
 * step on Switchyard's own keys is one Lua script (./lua/runCancel, runWake)
 * that first checks the job's BullMQ lock, so it never races a worker that
 * woke the run at the same moment: either the script ran first (a worker that
 * takes the job later reads what it wrote) or the job is running and the
 * script changes nothing. The job itself moves only by BullMQ's own atomic
 * calls (remove, promote). Each cancel and wake is recorded in the delivery's
 * history with who did it ({@link RunNote}).
 */

/** Who operated a run: the OS user for the CLI, the admin's user for its page; `via` where (`cli`, `admin`). */
export interface RunActor {
  readonly who: string;
  readonly via: string;
  readonly reason?: string;
}

/** A cancel or wake as the delivery's history keeps it (src/history: an `operator` entry). */
export interface RunNote {
  readonly action: 'cancel' | 'wake';
  readonly at: number;
  readonly handler: string;
  /** The sleep or wait the run was parked in. */
  readonly wait: string;
  readonly waitKind: ParkedRun['kind'];
  readonly by: string;
  readonly via: string;
  readonly reason?: string;
  /** A woken wait: `timeout` (it returns null), or `matched` (an event answered it first: it returns that). */
  readonly outcome?: 'timeout' | 'matched';
}

/** Where a {@link RunNote} goes: the delivery's history (src/history `runNoteWriter`). */
export type RunNoteSink = (deliveryKey: string, note: RunNote) => Promise<void>;

export interface ParkedRunDeps {
  readonly redis: RedisClient;
  readonly prefix: string;
  /** The handler queues (`openHandlerQueues(redis, prefix)`): a cancelled run's job is removed, a woken one promoted. */
  readonly queues: HandlerQueues;
  /** Where each cancel and wake is recorded; absent: not recorded (history off). */
  readonly history?: RunNoteSink;
  /** How long a cancel waits for a run that is running right now to park again or end (ms; default 3 000). */
  readonly busyWaitMs?: number;
  readonly now?: () => number;
}

/** Which parked runs: every criterion given must hold. */
export interface RunFilter {
  readonly handler?: string;
  readonly kind?: ParkedRun['kind'];
  /** Due within this many ms from now. */
  readonly dueWithinMs?: number;
  /** The run's own event (its job's data: no kept body needed) satisfies these conditions (`--where`, src/events/where.ts). */
  readonly where?: WhereQuery;
}

export interface CancelResult {
  readonly run: ParkedRun;
  /**
   * `cancelled`; `finished`: not parked any more (it ended, or someone cancelled it first); `running`: its run
   * was still running when the wait for it to park again or end ran out (nothing was changed).
   */
  readonly status: 'cancelled' | 'finished' | 'running';
}

export interface WakeResult {
  readonly run: ParkedRun;
  /**
   * `woken`: the sleep ends now; `timeout`: the wait returns null now; `matched`: an event answered the wait
   * first (the run resumes with it); `running`: it is running now (it woke already); `finished`: not parked any more.
   */
  readonly status: 'woken' | 'timeout' | 'matched' | 'running' | 'finished';
}

/**
 * cancelOn entries forgotten per cancelled run (`<scope>:c:0` … `c:63`): a handler declares at most this many
 * (src/handler/workflow-policy.ts MAX_CANCEL_ON, the same number).
 */
export const CANCEL_ON_IDS = 64;
/** How often a cancel looks again at a run that is running. */
const BUSY_POLL_MS = 100;
/** How long the marker of a removed ordered run's place stays (a repeated fan-out of it adds nothing meanwhile). */
const RELEASED_MARKER_MS = 7 * 86_400_000;

/** Whether a parked run passes the filter's handler, kind and due time (its `where` is {@link filterParkedRuns}'). */
export function matchesRunFilter(r: ParkedRun, f: RunFilter, now: number): boolean {
  return (
    (f.handler === undefined || r.handler === f.handler) &&
    (f.kind === undefined || r.kind === f.kind) &&
    (f.dueWithinMs === undefined || r.dueAt - now <= f.dueWithinMs)
  );
}

/** Jobs read at once for `where`. */
const WHERE_READS = 50;

/**
 * The runs that pass the filter, in their order. `where` reads each remaining run's event from its job (the
 * handler queues); a run whose job is gone does not match.
 */
export async function filterParkedRuns(
  deps: Pick<ParkedRunDeps, 'queues' | 'now'>,
  runs: readonly ParkedRun[],
  f: RunFilter,
): Promise<ParkedRun[]> {
  const now = (deps.now ?? Date.now)();
  const passed = runs.filter((r) => matchesRunFilter(r, f, now));
  const { where } = f;
  if (!where) return passed;
  const byName = queuesByName(deps.queues);
  const out: ParkedRun[] = [];
  for (let i = 0; i < passed.length; i += WHERE_READS) {
    const chunk = passed.slice(i, i + WHERE_READS);
    const jobs = await Promise.all(
      chunk.map(async (r) => {
        const q = byName.get(r.queue);
        return q ? Job.fromId<HandlerJobData>(q, r.jobId) : undefined;
      }),
    );
    chunk.forEach((r, j) => {
      const event = jobs[j]?.data?.event;
      if (event && matchesWhere(where, event.name, event.data)) out.push(r);
    });
  }
  return out;
}

/** The parked runs that pass the filter, soonest due first. */
export async function selectParkedRuns(
  deps: Pick<ParkedRunDeps, 'redis' | 'prefix' | 'queues' | 'now'>,
  f: RunFilter,
): Promise<ParkedRun[]> {
  return filterParkedRuns(deps, await new RunRecords(deps.redis, deps.prefix).parked(), f);
}

/** The handler queues by name. */
function queuesByName(queues: HandlerQueues): Map<string, Queue> {
  return new Map(PRIORITIES.map((p) => [HANDLER_QUEUE_BY_PRIORITY[p] as string, queues[p]]));
}

/**
 * The parked runs a reference names: the run's job id (`d/<key>/<handler>`, as `waits --json` and `dlq list` show
 * it), or a delivery key (as `waits` shows it), narrowed to `handler` when given. More than one: the reference is
 * ambiguous (several handlers' runs of one delivery).
 */
export async function resolveParkedRun(deps: Pick<ParkedRunDeps, 'redis' | 'prefix'>, ref: string, handler?: string): Promise<ParkedRun[]> {
  const records = new RunRecords(deps.redis, deps.prefix);
  const direct = await records.one(ref);
  if (direct && (handler === undefined || direct.handler === handler)) return [direct];
  return (await records.parked()).filter(
    (r) => (r.scope === ref || r.jobId === ref || r.deliveryKey === ref) && (handler === undefined || r.handler === handler),
  );
}

/** The parked runs of handlers that are not in `loaded` (no module defines them any more): nothing will ever run them. */
export async function orphanedRuns(deps: Pick<ParkedRunDeps, 'redis' | 'prefix'>, loaded: Iterable<string>): Promise<ParkedRun[]> {
  const ids = new Set(loaded);
  return (await new RunRecords(deps.redis, deps.prefix).parked()).filter((r) => !ids.has(r.handler));
}

/** The command that cancels every parked run of `handler` (start-up's warning, `switchyard doctor`, the admin page). */
export function cancelCommandFor(handler: string): string {
  return `switchyard waits cancel --handler ${handler} --yes`;
}

/** Cancels the runs given (or those the filter selects now), one after the other; what became of each. */
export async function cancelParkedRuns(
  deps: ParkedRunDeps,
  selection: RunFilter | readonly ParkedRun[],
  actor: RunActor,
): Promise<CancelResult[]> {
  const runs = Array.isArray(selection) ? (selection as readonly ParkedRun[]) : await selectParkedRuns(deps, selection as RunFilter);
  const ops = new RunOps(deps);
  const out: CancelResult[] = [];
  for (const run of runs) out.push(await ops.cancel(run, actor));
  return out;
}

/** Wakes one parked run now (a run, or a reference {@link resolveParkedRun} resolves to exactly one run). */
export async function wakeParkedRun(deps: ParkedRunDeps, ref: ParkedRun | string, actor: RunActor): Promise<WakeResult> {
  let run: ParkedRun;
  if (typeof ref === 'string') {
    const found = await resolveParkedRun(deps, ref);
    if (found.length !== 1) throw new RunRefError(ref, found);
    run = found[0] as ParkedRun;
  } else run = ref;
  return new RunOps(deps).wake(run, actor);
}

/** A reference that names no parked run, or several. */
export class RunRefError extends Error {
  constructor(
    readonly ref: string,
    readonly found: readonly ParkedRun[],
  ) {
    super(
      found.length === 0
        ? `no parked run is named "${ref}" (give the delivery key that \`switchyard waits\` shows, or the run's job id d/<key>/<handler>)`
        : `"${ref}" names ${found.length} parked runs (handlers ${found.map((r) => r.handler).join(', ')}): name the handler too`,
    );
    this.name = 'RunRefError';
  }
}

class RunOps {
  private readonly records: RunRecords;
  private readonly lua;
  private readonly now: () => number;
  private readonly byName: Map<string, Queue>;
  private readonly k;

  constructor(private readonly deps: ParkedRunDeps) {
    this.records = new RunRecords(deps.redis, deps.prefix);
    this.lua = WAIT_SCRIPTS.on(deps.redis);
    this.now = deps.now ?? Date.now;
    this.byName = queuesByName(deps.queues);
    const base = `${deps.prefix}:wait:`;
    this.k = { state: `${base}state`, wake: `${base}wake`, on: `${base}on:`, due: parkedKey(deps.prefix) };
  }

  private queue(run: ParkedRun): Queue {
    const q = this.byName.get(run.queue);
    if (!q) throw new Error(`parked run ${run.scope}: unknown handler queue "${run.queue}"`);
    return q;
  }

  /** The BullMQ lock of the run's job: held while a worker runs it. */
  private lockKey(run: ParkedRun): string {
    return `${this.queue(run).toKey(run.jobId)}:lock`;
  }

  async cancel(first: ParkedRun, actor: RunActor): Promise<CancelResult> {
    const deadline = this.now() + (this.deps.busyWaitMs ?? 3_000);
    let run = first;
    for (;;) {
      const fields = await this.records.load(run.scope);
      const status = (await this.lua.runCancel(
        [runKey(this.deps.prefix, run.scope), this.k.state, this.k.wake, this.k.due, this.lockKey(run)],
        [fields.get('p') ?? '', mark(actor), this.k.on, run.scope, CANCEL_ON_IDS, ...waitIdsOf(run.scope, fields)],
      )) as 'cancelled' | 'running' | 'gone' | 'moved';
      if (status === 'cancelled') break;
      if (status === 'gone') return { run, status: 'finished' };
      if (status === 'running') {
        if (this.now() >= deadline) return { run, status: 'running' };
        await sleep(BUSY_POLL_MS);
      }
      // Running, or parked again elsewhere: read where it is now.
      run = (await this.records.one(run.scope)) ?? run;
    }
    await this.removeJob(run);
    await this.note(run, actor, 'cancel');
    return { run, status: 'cancelled' };
  }

  /**
   * Removes a cancelled run's job (BullMQ's remove: refused while a worker holds it; that worker reads the mark
   * and ends the run cancelled itself) and gives up what it held: its key's turn, its debounce burst.
   */
  private async removeJob(run: ParkedRun): Promise<void> {
    const queue = this.queue(run);
    const job = await Job.fromId<HandlerJobData>(queue, run.jobId);
    if (!job) return;
    const deadline = this.now() + (this.deps.busyWaitMs ?? 3_000);
    for (;;) {
      try {
        await job.remove();
        break;
      } catch {
        // Held by a worker that took it after the mark: one that runs the handler ends it cancelled (then it is
        // completed); one that does not hands it back at once, and it is removed then.
        const state = await queue.getJobState(run.jobId);
        if (state !== 'active' || this.now() >= deadline) return;
        await sleep(BUSY_POLL_MS);
      }
    }
    const { data } = job;
    if (!data.order && !data.debounce) return;
    const flow = new FlowControl(this.deps.redis, this.deps.prefix, new BullFlowJobs(this.deps.queues), { keepMs: RELEASED_MARKER_MS });
    if (data.order) await flow.release({ ...data, order: data.order }, run.jobId, 'released');
    if (data.debounce) await flow.finish(data.handlerId, data.debounce, run.jobId);
  }

  async wake(first: ParkedRun, actor: RunActor): Promise<WakeResult> {
    let run = first;
    for (;;) {
      const fields = await this.records.load(run.scope);
      const p = fields.get('p');
      const name = p === undefined ? run.name : ((JSON.parse(p) as string[])[1] as string);
      const raw = fields.get(`t:${name}`);
      const now = this.now();
      if (raw === undefined) return { run, status: 'finished' };
      const reached = decodeReached(raw, run.scope, name);
      const waitId = reached.id ? (reached.n ? `${reached.id}:${reached.n}` : reached.id) : '';
      const t = encodeReached({ ...reached, due: now }, run.scope, name);
      const status = (await this.lua.runWake(
        [runKey(this.deps.prefix, run.scope), this.k.state, this.k.due, this.lockKey(run)],
        [p ?? '', name, t, reached.k === 'wait' ? waitId : '', now, this.k.on, run.scope],
      )) as string; // woken, timeout, running, gone, moved, or the state of a wait that is not pending (matched)
      if (status === 'moved') {
        run = (await this.records.one(run.scope)) ?? run;
        continue;
      }
      if (status === 'running') return { run, status };
      if (status === 'gone') return { run, status: 'finished' };
      // Promoted now (BullMQ moves a delayed job only): it runs once, from its record, past this sleep or wait.
      const job = await Job.fromId(this.queue(run), run.jobId);
      await job?.promote().catch(() => undefined);
      if (status === 'matched') return { run, status };
      await this.note(run, actor, 'wake', status === 'timeout' ? 'timeout' : undefined);
      return { run, status: status === 'timeout' ? 'timeout' : 'woken' };
    }
  }

  private async note(run: ParkedRun, actor: RunActor, action: RunNote['action'], outcome?: RunNote['outcome']): Promise<void> {
    if (!this.deps.history) return;
    await this.deps.history(run.deliveryKey, {
      action,
      at: this.now(),
      handler: run.handler,
      wait: run.name,
      waitKind: run.kind,
      by: actor.who,
      via: actor.via,
      ...(actor.reason ? { reason: actor.reason } : {}),
      ...(outcome ? { outcome } : {}),
    });
  }
}

/** The record's `x` of a cancelled run: who, where (kept short: the record stays a small listpack). */
function mark(actor: RunActor): string {
  return `${actor.who} (${actor.via})`.slice(0, 64);
}
