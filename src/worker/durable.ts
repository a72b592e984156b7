import type { WriteMemo } from '../api/transport.js';
import { jobIdFor } from '../events/envelope.js';
import type { WorkspaceEvent } from '../events/catalogue.js';
import type { Handler } from '../handler/define.js';
import { HandlerConfigError } from '../handler/errors.js';
import { keyOf, type KeyOption } from '../handler/flow.js';
import type { SleepOptions, WaitForEventOptions } from '../handler/workflow.js';
import type { AttemptObserver } from '../lifecycle/bus.js';
import type { HandlerJobData } from '../queue/jobs.js';
import type { ParkedRun, RunRecords } from '../queue/waits/runs.js';
import type { HandlerStateStore, StateValue } from '../queue/state/store.js';
import type { WaitState, WaitStore } from '../queue/waits/store.js';
import { decodeReached, defaultWaitId, encodeReached, type Reached } from '../queue/waits/reached.js';
import { addBusinessTime } from '../recipes/business-time.js';
import { parseDuration } from '../util/units.js';

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
interface Over { r: 'due' | 'event' | 'timeout'; e?: string; d?: string }


const ms = (d: number | string, what: string): number => {
  const v = typeof d === 'number' ? d : parseDuration(d);
  if (v === null || !Number.isFinite(v) || v < 0) throw new TypeError(`${what}: expected a duration such as '15m' or a number of milliseconds, got ${JSON.stringify(d)}`);
  return Math.round(v);
};

/** The key a cancelOn entry or a wait matches under (`conversation:42`; a function's value, namespaced by handler and entry). */
export function matchKey(match: KeyOption, event: { name: WorkspaceEvent['name']; data: unknown }, fnScope: string): string | null {
  const k = keyOf(match, event);
  if (k === null) return null;
  return typeof match === 'function' ? `fn:${fnScope}:${k}` : k;
}

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
    this.scope = jobIdFor(data.key, handler.id);
    this.now = deps.now ?? Date.now;
    // Every wait id the run registered (a function-matched wait one per candidate passed over): forgotten when it ends.
    for (const [f, v] of loaded) {
      if (!f.startsWith('t:')) continue;
      const r = decodeReached(v, this.scope, f.slice(2));
      if (r.id) for (let n = 0; n <= (r.n ?? 0); n++) this.waitIds.add(n === 0 ? r.id : `${r.id}:${n}`);
    }
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

  private begin(name: string, what: string): void {
    this.guard();
    if (typeof name !== 'string' || name === '') throw new TypeError(`${what} needs a non-empty name`);
    if (this.names.has(name)) throw new TypeError(`${what} "${name}" reached twice in one run: sleep and wait names must be unique within a handler`);
    this.names.add(name);
  }

  private park(req: ParkRequest): never {
    this.parked = req;
    throw new ParkSignal(req.name);
  }

  async sleep(name: string, duration: number | string, opts: SleepOptions | undefined): Promise<void> {
    const d = ms(duration, `ctx.sleep("${name}")`);
    return this.sleepTo(name, (now) => (opts?.businessHours ? addBusinessTime(opts.businessHours, new Date(now), d).getTime() : now + d), 'ctx.sleep');
  }

  async sleepUntil(name: string, at: Date | string | number, opts: SleepOptions | undefined): Promise<void> {
    const t = at instanceof Date ? at.getTime() : typeof at === 'number' ? at : Date.parse(at);
    if (!Number.isFinite(t)) throw new TypeError(`ctx.sleepUntil("${name}"): not a date: ${JSON.stringify(at)}`);
    // With business hours: at the first open instant at or after `at`.
    return this.sleepTo(name, () => (opts?.businessHours ? addBusinessTime(opts.businessHours, new Date(t), 0).getTime() : t), 'ctx.sleepUntil');
  }

  private async sleepTo(name: string, dueOf: (now: number) => number, what: string): Promise<void> {
    this.begin(name, what);
    if (this.field(`o:${name}`) !== undefined) return;
    const now = this.now();
    let reached = this.reached(name);
    if (!reached) {
      reached = { k: 'sleep', due: dueOf(now) };
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
    this.begin(name, 'ctx.waitForEvent');
    const over = this.field(`o:${name}`);
    if (over !== undefined) {
      const o = JSON.parse(over) as Over;
      return o.r === 'event' && o.e ? JSON.parse(o.e) as WorkspaceEvent<E> : null;
    }
    if (!opts || typeof opts.event !== 'string') throw new TypeError(`ctx.waitForEvent("${name}") needs { event, match, timeout }`);
    const fnMatch = typeof opts.match === 'function';
    const now = this.now();
    let reached = this.reached(name);
    if (!reached) {
      const own = keyOf(opts.match, this.data.event);
      if (own === null) throw new HandlerConfigError(`ctx.waitForEvent("${name}") in handler "${this.handler.id}": the run's event (${this.data.event.name}) has no ${fnMatch ? 'key (the match function gave none)' : `${String(opts.match)} id`} to match on`);
      const lookback = opts.lookback ?? true;
      const ownMs = this.receivedMs;
      const since = lookback === true ? ownMs : lookback === false ? now : Math.max(ownMs, now - ms(lookback, `ctx.waitForEvent("${name}") lookback`));
      // A function match is unknown to the process that fans a later event out: the wait takes every event
      // of the name (key `any:<name>`) and this run compares the function's keys itself (`own`, `n`: below).
      reached = {
        k: 'wait', due: now + ms(opts.timeout, `ctx.waitForEvent("${name}") timeout`), since, id: defaultWaitId(this.scope, name), ev: opts.event,
        key: fnMatch ? `any:${opts.event}` : own, ...(fnMatch ? { own, n: 0 } : {}),
      };
      this.fresh.set(`t:${name}`, encodeReached(reached, this.scope, name));
      this.observe?.wait({ name, kind: 'wait-for-event', dueAt: reached.due, event: opts.event });
    }
    // A function-matched wait goes through the candidates one registration at a time: each event of the
    // name that another key answered is passed over (its registration forgotten) and the next one
    // registers from just after it, so register-or-answer still sees every later event exactly once.
    // (Events of the same millisecond as a passed-over one are not looked at.)
    for (let hops = 0; ; hops++) {
      const id = reached.n ? `${reached.id as string}:${reached.n}` : reached.id as string;
      this.waitIds.add(id);
      let st: WaitState | null = await this.deps.waits.register({
        id, key: reached.key as string, event: reached.ev, since: reached.since ?? now, dueAt: reached.due, run: this.runRef,
      });
      if (st.status === 'pending' && reached.due <= now) st = await this.deps.waits.settle(id, now);
      if (st?.status === 'matched' && st.match) {
        const got = JSON.parse(st.match.body) as WorkspaceEvent<E>;
        if (reached.own !== undefined && typeof opts.match === 'function' && keyOf(opts.match, got) !== reached.own) {
          if (hops > 10_000) throw new Error(`ctx.waitForEvent("${name}"): more than 10 000 events of ${reached.ev as string} passed over in one run`);
          reached = { ...reached, since: st.match.receivedAt, n: (reached.n ?? 0) + 1 };
          this.fresh.set(`t:${name}`, encodeReached(reached, this.scope, name));
          continue;
        }
        this.fresh.set(`o:${name}`, JSON.stringify({ r: 'event', e: st.match.body, d: st.match.deliveryKey } satisfies Over));
        this.observe?.wait({ name, kind: 'wait-for-event', dueAt: reached.due, outcome: 'event', event: reached.ev, eventKey: st.match.deliveryKey });
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

  // ── ctx.state ──

  private stateKey(): string {
    const st = this.handler.workflow.state;
    if (st === null) throw new HandlerConfigError(`handler "${this.handler.id}" uses ctx.state but has neither "state" nor "orderBy": add state: { key: 'conversation' } (or 'contact', or a function)`);
    const k = keyOf(st.key, this.data.event);
    if (k === null) throw new HandlerConfigError(`handler "${this.handler.id}" uses ctx.state, but its event ${this.data.event.name} has no state key`);
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
  async stateWrite(fn: (current: StateValue | undefined) => StateValue | Promise<StateValue>): Promise<StateValue> {
    this.guard();
    const key = this.stateKey();
    const field = `s:${++this.stateWrites}`;
    const done = this.field(field);
    if (done !== undefined) return JSON.parse(done) as StateValue;
    const ttl = (this.handler.workflow.state as { ttlMs: number }).ttlMs;
    const value = await this.deps.state.update(this.handler.id, key, fn, ttl);
    this.fresh.set(field, JSON.stringify(value));
    return value;
  }

  // ── API writes ──

  /** The memo of this run's API writes, by Idempotency-Key (the API client's `memo`). */
  readonly memo: WriteMemo = {
    get: (key) => {
      const v = this.field(`m:${key}`);
      return v === undefined ? undefined : JSON.parse(v) as ReturnType<WriteMemo['get']>;
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
        name, kind: r.k === 'sleep' ? 'sleep' : 'wait-for-event', dueAt: r.due,
        ...(waitId ? { waitId } : {}), ...(r.ev ? { event: r.ev } : {}), ...(r.own ?? r.key ? { key: r.own ?? r.key } : {}),
        ...(held ? { heldSince: Number(held) } : {}),
      };
    }
    return null;
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
      scope: this.scope, name: req.name, handler: this.handler.id, deliveryKey: this.data.key, kind: req.kind, dueAt: req.dueAt,
      ...(req.event ? { event: req.event } : {}), ...(req.key ? { key: req.key } : {}), queue, jobId,
    };
  }
}
