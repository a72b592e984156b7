import type { WriteMemo } from '../api/index.js';
import type { WorkspaceEvent } from '../events/index.js';
import {
  type Handler,
  HandlerConfigError,
  keyOf,
  checkStateValue,
  stateLabel,
  type StateSchema,
  type MatchOption,
  type SleepOptions,
  type WaitForEventOptions,
  callLabel,
  checkName,
  checkReach,
  DEFAULT_MAX_WAIT_MS,
  durationMs,
  nameTwice,
  ownKey,
  sleepOptions,
  takes,
  timeMs,
  waitCall,
  type WaitCall,
  type WorkflowLimits,
} from '../handler/index.js';
import type { AttemptObserver } from '../lifecycle/index.js';
import type { Logger } from '../log/index.js';
import {
  type HandlerJobData,
  type ParkedRun,
  type RunRecords,
  type HandlerStateStore,
  type StateValue,
  type WaitState,
  type WaitStore,
  decodeReached,
  defaultWaitId,
  encodeReached,
  type Reached,
  waitIdsOf,
} from '../queue/index.js';
import { addBusinessTime } from '../recipes/index.js';
import { runScope } from './derived-keys.js';
import { currentFairSlot } from './fair.js';

/**
 * The durable part of one handler attempt (`ctx.sleep`, `ctx.sleepUntil`,
 * `ctx.waitForEvent`, `ctx.state`, and the memory of API writes), on the
 * replay model: a run that was woken runs again from the start, and what it
 * already did is returned from its record (src/queue/waits/runs.ts): a sleep or
 * wait that is over returns at once (a wait its event), an API write its first
 * response, a `ctx.state` write the value it wrote. A sleep or wait that is not
 * over *parks* the run: it throws {@link ParkSignal}, which unwinds the
 * handler; the processor then saves the record and parks the job (BullMQ
 * delayed: no slot, no lock, no attempt, no API budget) until its due time or
 * until an event wakes it. The request to park is remembered here, so a
 * handler that catches and swallows the signal is parked all the same (its
 * normal return is ignored, and any further ctx call throws the signal again).
 */

/** Unwinds a handler that sleeps or waits (internal: a handler should not catch it, and if it does, it is parked anyway). */
export class ParkSignal extends Error {
  constructor(readonly wait: string) {
    super(`the run is parked in "${wait}" (sleep or wait): it resumes from the start once that is over`);
    this.name = 'ParkSignal';
  }
}

export interface DurableDeps {
  readonly records: RunRecords;
  readonly waits: WaitStore;
  readonly state: HandlerStateStore;
  /** How long a run's record is kept after its last sleep or wait is due (the dedupe window). */
  readonly keepMs: number;
  /** The longest a due run is held for a delivery not fanned out yet (src/worker/hold.ts, default HOLD_MAX_MS). */
  readonly holdMaxMs?: number;
  /** How far sleeps and waits may reach (DEDUPE_TTL; default 7 days). */
  readonly limits?: WorkflowLimits;
  /** Where a deprecated use is warned about (once per handler and wait in a process). */
  readonly log?: Pick<Logger, 'warn'>;
  readonly now?: () => number;
}

/** Where a run parks. */
export interface ParkRequest {
  readonly name: string;
  readonly kind: 'sleep' | 'wait-for-event';
  readonly dueAt: number;
  /** A wait's id in the WaitStore. */
  readonly waitId?: string;
  readonly event?: string;
  readonly key?: string;
}

/** The sleep or wait a run was parked in when it was woken, from its record (src/worker/hold.ts). */
export interface ParkedIn extends ParkRequest {
  /** When a worker first held it past its due time for a delivery not fanned out yet (ms; `h:<name>`). */
  readonly heldSince?: number;
}

/** How it ended (`o:<name>`). */
interface Over {
  r: 'due' | 'event' | 'timeout';
  e?: string;
  d?: string;
}

/**
 * The key a cancelOn entry or a wait registers under for the run's own event (`conversation:42`; a function's value,
 * namespaced by handler and entry; a keyed `where`'s key, namespaced likewise).
 */
export function matchKey(match: MatchOption, event: { name: WorkspaceEvent['name']; data: unknown }, fnScope: string): string | null {
  const k = ownKey(match, event);
  if (k === null) return null;
  return typeof match === 'function' ? `fn:${fnScope}:${k}` : typeof match === 'object' ? `w:${fnScope}:${k}` : k;
}

/** Handler and wait names already warned about in this process (a bare key function in a wait). */
const warned = new Set<string>();

/** The WaitStore id of a run's cancelOn entry `i`. */
export const cancelId = (scope: string, i: number): string => `${scope}:c:${i}`;

export class DurableRun {
  readonly scope: string;
  /** Set once the run asked to park: it parks whatever the handler does after. */
  parked: ParkRequest | null = null;
  /** Fields to add to the run's record. */
  readonly fresh = new Map<string, string>();
  /** Wait ids this attempt consumed or registered (forgotten when the run ends). */
  readonly waitIds = new Set<string>();
  private readonly names = new Set<string>();
  private stateWrites = 0;
  private readonly now: () => number;

  constructor(
    private readonly deps: DurableDeps,
    readonly handler: Pick<Handler, 'id' | 'workflow'>,
    readonly data: HandlerJobData,
    /** Who to wake (`<queue>|<job id>`). */
    readonly runRef: string,
    /** The run's record (empty for a run that never parked). */
    private readonly loaded: ReadonlyMap<string, string>,
    private readonly observe: AttemptObserver | undefined,
  ) {
    this.scope = runScope(data, handler.id);
    this.now = deps.now ?? Date.now;
    // Every wait id the run registered (a function-matched wait one per candidate passed over): forgotten when it ends.
    for (const id of waitIdsOf(this.scope, loaded)) this.waitIds.add(id);
  }

  private field(name: string): string | undefined {
    return this.fresh.get(name) ?? this.loaded.get(name);
  }

  /** The sleep or wait `name` as the record has it (reached before), if it does. */
  private reached(name: string): Reached | undefined {
    const raw = this.field(`t:${name}`);
    return raw === undefined ? undefined : decodeReached(raw, this.scope, name);
  }

  /** The run's own event's receipt (ms): the default lookback starts there. */
  get receivedMs(): number {
    const t = Date.parse(this.data.receivedAt);
    return Number.isFinite(t) ? t : 0;
  }

  /** Throws the park signal again once the run is parked (no further step, write or wait). */
  guard(): void {
    if (this.parked) throw new ParkSignal(this.parked.name);
  }

  /** Checks the name of a sleep or wait first reached now; its label for messages. */
  private begin(name: unknown, what: string): string {
    this.guard();
    const label = callLabel(what, name, this.handler.id);
    checkName(label, name);
    if (this.names.has(name as string)) throw nameTwice(label);
    this.names.add(name as string);
    return label;
  }

  private get limits(): WorkflowLimits {
    return this.deps.limits ?? { maxMs: DEFAULT_MAX_WAIT_MS };
  }

  private park(req: ParkRequest): never {
    this.parked = req;
    throw new ParkSignal(req.name);
  }

  async sleep(name: string, duration: number | string, opts: SleepOptions | undefined): Promise<void> {
    const label = this.begin(name, 'ctx.sleep');
    const d = durationMs(label, 'the duration', duration, true);
    const hours = sleepOptions(label, opts)?.businessHours;
    return this.sleepTo(name, label, (now) => (hours ? addBusinessTime(hours, new Date(now), d).getTime() : now + d));
  }

  async sleepUntil(name: string, at: Date | string | number, opts: SleepOptions | undefined): Promise<void> {
    const label = this.begin(name, 'ctx.sleepUntil');
    const t = timeMs(label, at);
    const hours = sleepOptions(label, opts)?.businessHours;
    // With business hours: at the first open instant at or after `at`.
    return this.sleepTo(name, label, () => (hours ? addBusinessTime(hours, new Date(t), 0).getTime() : t));
  }

  private async sleepTo(name: string, label: string, dueOf: (now: number) => number): Promise<void> {
    if (this.field(`o:${name}`) !== undefined) return;
    const now = this.now();
    let reached = this.reached(name);
    if (!reached) {
      const due = dueOf(now);
      checkReach(label, due, now, this.receivedMs, this.limits);
      reached = { k: 'sleep', due };
      this.fresh.set(`t:${name}`, encodeReached(reached, this.scope, name));
      this.observe?.wait({ name, kind: 'sleep', dueAt: reached.due });
    }
    if (reached.due <= now) {
      this.fresh.set(`o:${name}`, JSON.stringify({ r: 'due' } satisfies Over));
      this.observe?.wait({ name, kind: 'sleep', dueAt: reached.due, outcome: 'due' });
      return;
    }
    this.park({ name, kind: 'sleep', dueAt: reached.due });
  }

  async waitForEvent<E extends WorkspaceEvent['name']>(name: string, opts: WaitForEventOptions<E>): Promise<WorkspaceEvent<E> | null> {
    const label = this.begin(name, 'ctx.waitForEvent');
    const call = waitCall<E>(label, opts, this.data.event);
    const over = this.field(`o:${name}`);
    if (over !== undefined) {
      const o = JSON.parse(over) as Over;
      return o.r === 'event' && o.e ? (JSON.parse(o.e) as WorkspaceEvent<E>) : null;
    }
    const { match } = call;
    const now = this.now();
    let reached = this.reached(name) ?? this.reachWait(name, label, call, now);
    // A wait matched by a key function or a keyed `where` goes through the candidates one registration at a time: each event of the
    // name that another key answered (or `where` refused) is passed over (its registration forgotten) and the next one
    // registers from just after it, so register-or-answer still sees every later event exactly once.
    // (Events of the same millisecond as a passed-over one are not looked at.)
    for (let hops = 0; ; hops++) {
      const id = reached.n ? `${reached.id as string}:${reached.n}` : (reached.id as string);
      this.waitIds.add(id);
      let st: WaitState | null = await this.deps.waits.register({
        id,
        key: reached.key as string,
        event: reached.ev,
        since: reached.since ?? now,
        dueAt: reached.due,
        run: this.runRef,
      });
      if (st.status === 'pending' && reached.due <= now) st = await this.deps.waits.settle(id, now);
      if (st?.status === 'matched' && st.match) {
        const got = JSON.parse(st.match.body) as WorkspaceEvent<E>;
        if (reached.own !== undefined && typeof match !== 'string' && !takes(match, reached.own, got)) {
          if (hops > 10_000)
            throw new Error(`ctx.waitForEvent("${name}"): more than 10 000 events of ${reached.ev as string} passed over in one run`);
          reached = { ...reached, since: st.match.receivedAt, n: (reached.n ?? 0) + 1 };
          this.fresh.set(`t:${name}`, encodeReached(reached, this.scope, name));
          continue;
        }
        this.fresh.set(`o:${name}`, JSON.stringify({ r: 'event', e: st.match.body, d: st.match.deliveryKey } satisfies Over));
        this.observe?.wait({
          name,
          kind: 'wait-for-event',
          dueAt: reached.due,
          outcome: 'event',
          event: reached.ev,
          eventKey: st.match.deliveryKey,
        });
        return got;
      }
      if (st === null || st.status === 'timeout') {
        this.fresh.set(`o:${name}`, JSON.stringify({ r: 'timeout' } satisfies Over));
        this.observe?.wait({ name, kind: 'wait-for-event', dueAt: reached.due, outcome: 'timeout', event: reached.ev });
        return null;
      }
      this.park({ name, kind: 'wait-for-event', dueAt: reached.due, waitId: id, event: reached.ev, key: reached.own ?? reached.key });
    }
  }

  /** A wait first reached now: where it registers, from when it looks back, when it times out (recorded in the run). */
  private reachWait<E extends WorkspaceEvent['name']>(name: string, label: string, call: WaitCall<E>, now: number): Reached {
    const { match, lookback } = call;
    const own = ownKey(match, this.data.event) as string;
    const ownMs = this.receivedMs;
    const since = lookback === true ? ownMs : lookback === false ? now : Math.max(ownMs, now - lookback);
    const due = now + call.timeoutMs;
    checkReach(label, due, now, ownMs, this.limits);
    // A key function is unknown to the process that fans a later event out: the wait takes every event
    // of the name (key `any:<name>`) and this run compares the function's keys itself (`own`, `n`: below).
    // A keyed `where` waits under the run's own key and asks `where` about that key's events only.
    const fnMatch = typeof match === 'function';
    const keyed = typeof match === 'object';
    if (fnMatch && !warned.has(`${this.handler.id}\u0000${name}`)) {
      warned.add(`${this.handler.id}\u0000${name}`);
      this.deps.log?.warn(
        { handler: this.handler.id, wait: name },
        `ctx.waitForEvent("${name}") in handler "${this.handler.id}" matches with a bare key function (deprecated): ` +
          `every ${call.event} event wakes every run waiting this way; ` +
          "write match: { on: 'conversation' | 'contact', where: (event) => boolean }",
      );
    }
    const reached: Reached = {
      k: 'wait',
      due,
      since,
      id: defaultWaitId(this.scope, name),
      ev: call.event,
      key: fnMatch ? `any:${call.event}` : own,
      ...(fnMatch || keyed ? { own, n: 0 } : {}),
    };
    this.fresh.set(`t:${name}`, encodeReached(reached, this.scope, name));
    this.observe?.wait({ name, kind: 'wait-for-event', dueAt: reached.due, event: call.event });
    return reached;
  }

  // ── ctx.state ──

  private stateKey(): string {
    const st = this.handler.workflow.state;
    if (st === null) {
      throw new HandlerConfigError(
        `handler "${this.handler.id}" uses ctx.state but has neither "state" nor "orderBy": ` +
          "add state: { key: 'conversation' } (or 'contact', or a function)",
      );
    }
    const k = keyOf(st.key, this.data.event);
    if (k === null)
      throw new HandlerConfigError(`handler "${this.handler.id}" uses ctx.state, but its event ${this.data.event.name} has no state key`);
    return k;
  }

  async stateGet(): Promise<StateValue | null> {
    this.guard();
    const key = this.stateKey();
    const v = await this.deps.state.get(this.handler.id, key);
    return v === undefined ? null : v;
  }

  /**
   * A state write: done once per run across its sleeps and waits (a replay gets the value its first run
   * wrote, from the record saved when the run parked). A write made after the run's last park by an attempt
   * that then dies mid-run (SIGKILL) is not in the record yet: its retry writes again (at least once there).
   */
  async stateWrite(op: 'set' | 'update', fn: (current: StateValue | undefined) => StateValue | Promise<StateValue>): Promise<StateValue> {
    this.guard();
    const key = this.stateKey();
    const field = `s:${++this.stateWrites}`;
    const done = this.field(field);
    if (done !== undefined) return JSON.parse(done) as StateValue;
    const st = this.handler.workflow.state as { ttlMs: number; schema?: StateSchema | null };
    // Checked before it is written (the store writes nothing when this throws).
    const checked = async (current: StateValue | undefined): Promise<StateValue> => {
      // The key's lock is held while `fn` runs, and other runs of the key wait for it holding their slots: this run
      // keeps its own (an API call inside `fn` does not give it up), or it could wait behind its own waiters.
      const unpin = currentFairSlot()?.pin();
      try {
        const value = await fn(current);
        checkStateValue(stateLabel(op, this.handler.id, key), value, st.schema ?? null);
        return value;
      } finally {
        unpin?.();
      }
    };
    const value = await this.deps.state.update(this.handler.id, key, checked, st.ttlMs);
    this.fresh.set(field, JSON.stringify(value));
    return value;
  }

  // ── API writes ──

  /** The memo of this run's API writes, by Idempotency-Key (the API client's `memo`). */
  readonly memo: WriteMemo = {
    get: (key) => {
      const v = this.field(`m:${key}`);
      return v === undefined ? undefined : (JSON.parse(v) as ReturnType<WriteMemo['get']>);
    },
    set: (key, w) => {
      this.fresh.set(`m:${key}`, JSON.stringify(w));
    },
  };

  // ── the processor's part ──

  /** The sleep or wait the run parked in last (reached, not over), or null: what a resumed run is due in. */
  parkedIn(): ParkedIn | null {
    for (const [f, v] of this.loaded) {
      if (!f.startsWith('t:')) continue;
      const name = f.slice(2);
      if (this.loaded.has(`o:${name}`)) continue;
      const r = decodeReached(v, this.scope, name);
      const held = this.loaded.get(`h:${name}`);
      const waitId = r.id ? (r.n ? `${r.id}:${r.n}` : r.id) : undefined;
      return {
        name,
        kind: r.k === 'sleep' ? 'sleep' : 'wait-for-event',
        dueAt: r.due,
        ...(waitId ? { waitId } : {}),
        ...(r.ev ? { event: r.ev } : {}),
        ...((r.own ?? r.key) ? { key: r.own ?? r.key } : {}),
        ...(held ? { heldSince: Number(held) } : {}),
      };
    }
    return null;
  }

  /** Who cancelled the run while it was parked (`x` in its record: src/queue/waits/ops.ts), or null. */
  cancelledBy(): string | null {
    return this.loaded.get('x') ?? null;
  }

  /** Remembers when the run was first held past the due time of `name` (saved with the record). */
  holding(name: string, since: number): void {
    this.fresh.set(`h:${name}`, String(since));
  }

  /** Whether this attempt has anything to keep: the run parked before, or parks now. */
  get durable(): boolean {
    return this.loaded.size > 0 || this.parked !== null;
  }

  /** How long the record is kept from now. */
  keepFor(until: number): number {
    return Math.max(0, until - this.now()) + this.deps.keepMs;
  }

  /** The list entry of a parked run. */
  parkedEntry(req: ParkRequest, queue: string, jobId: string): ParkedRun {
    return {
      scope: this.scope,
      name: req.name,
      handler: this.handler.id,
      deliveryKey: this.data.key,
      kind: req.kind,
      dueAt: req.dueAt,
      ...(req.event ? { event: req.event } : {}),
      ...(req.key ? { key: req.key } : {}),
      queue,
      jobId,
    };
  }
}
