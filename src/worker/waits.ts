import type { WorkspaceEvent } from '../events/index.js';
import type { Handler } from '../handler/index.js';
import type { Logger } from '../log/index.js';
import type { StoredDelivery, ChangeClaimant, FanOutChecks, WaitStore, WokenRun } from '../queue/index.js';
import { matchKey } from './durable.js';

/**
 * The fan-out side of durable waits: each delivery (webhook, reconcile, poll:
 * every source goes through the `events` worker) is checked in one script,
 * which claims its change key (change-level dedupe) and, when it holds it, logs
 * it under its match keys for later lookbacks and answers the waits and
 * cancelOn entries pending on them; the runs it answered are then woken (their
 * parked job promoted).
 *
 * Cost for a delivery nobody waits on: that one script call (shared with the
 * change claim, and with the checks of the deliveries fanned out in the same
 * tick; sent at once, outside the connection's auto-pipelining), in which the waits
 * part is one HGET; its body and match keys are not even sent. Only *watched*
 * event names are logged: a name becomes watched when a loaded handler has it
 * in `cancelOn` (at start-up and after a reload) or when a run first registers
 * a wait for it, and stays watched. Logging every delivery would keep every
 * event body of every conversation and contact for the whole lookback window
 * (days) and cost a log write and trim per key on every delivery. The price:
 * the very first wait ever registered for a name cannot look back past the
 * moment it was registered (no event of that name was logged before); every
 * later wait of that name looks back fully. (A handler can watch a name from
 * start-up by listing it in cancelOn of some handler.)
 *
 * The race "the event answers the wait after it registered but before its job
 * is parked (moved to delayed)": the promotion here finds the job still active
 * and does nothing; the job re-reads its waits after it is moved to delayed and
 * promotes itself when one was answered (src/worker/job-moves.ts `applyDecision`). Either
 * the event script ran before that re-read (the job sees the answer) or after
 * the job was delayed (the promotion here finds it delayed). A wake-up lost with
 * a killed worker stays queued in the store's `wake` set and is redone by
 * {@link sweepWakes}.
 */

export interface EventWaitsDeps {
  readonly waits: WaitStore;
  /** The handlers loaded now (their cancelOn functions give the event's function keys). */
  readonly handlers: () => readonly Handler[];
  /** Promotes a parked run (`<queue>|<job id>`); a run not parked is left alone. */
  readonly wake: (run: string) => Promise<void>;
  readonly log: Logger;
  readonly now?: () => number;
}

/**
 * Every key an event can be matched under: its conversation, its contact, and for each loaded handler's cancelOn
 * entry of its name, a key function's value or (a keyed `where` that takes it) its key, namespaced by the entry.
 */
export function eventMatchKeys(event: WorkspaceEvent, handlers: readonly Handler[]): string[] {
  const keys = new Set<string>();
  for (const k of [matchKey('conversation', event, ''), matchKey('contact', event, '')]) if (k !== null) keys.add(k);
  for (const h of handlers) {
    h.workflow.cancelOn.forEach((c, i) => {
      if (typeof c.match === 'string' || c.event !== event.name) return;
      try {
        if (typeof c.match === 'object' && !c.match.where(event)) return;
        const k = matchKey(c.match, event, `${h.id}:${i}`);
        if (k !== null) keys.add(k);
      } catch {
        // A key or where function that throws on this event gives it no key.
      }
    });
  }
  return [...keys];
}

/** The event names the loaded handlers cancel on or declare they wait for (`waitsFor`): watched from start-up. */
export function watchedNames(handlers: readonly Handler[]): string[] {
  return [...new Set(handlers.flatMap((h) => [...h.workflow.cancelOn.map((c) => c.event), ...h.workflow.waitsFor]))];
}

/** What fan-out learns from {@link eventChecks}: whether it holds its change, and the runs it answered being woken. */
export interface EventCheck {
  /** False: another delivery of the same change was dispatched; nothing runs and no wait was answered. */
  readonly claimed: boolean;
  /** The wake-ups of the runs the event answered (none: absent). */
  readonly waking?: Promise<void>;
}

/**
 * The port fan-out calls with each valid event (FanOutPorts.check): its change claim (`change`, null when it
 * has no change key) and the waits it answers, in one script call (src/queue/fan-out-check.ts).
 */
export function eventChecks(
  deps: EventWaitsDeps & { readonly checks: FanOutChecks },
): (event: WorkspaceEvent, delivery: StoredDelivery, change: { key: string; claimant: ChangeClaimant } | null) => Promise<EventCheck> {
  const now = deps.now ?? Date.now;
  let watched: readonly Handler[] | undefined;
  return async (event, delivery, change) => {
    const handlers = deps.handlers();
    if (handlers !== watched) {
      // Start-up or a reload: the names its handlers cancel on are watched from now on.
      await deps.waits.watch(watchedNames(handlers));
      watched = handlers;
    }
    const receivedAt = Date.parse(delivery.receivedAt);
    const r = await deps.checks.check(
      change && { changeKey: change.key, who: change.claimant },
      {
        deliveryKey: delivery.key,
        name: event.name,
        receivedAt: Number.isFinite(receivedAt) ? receivedAt : now(),
        full: () => ({
          body: JSON.stringify({ id: event.id, name: event.name, createdAt: event.createdAt, data: event.data }),
          keys: eventMatchKeys(event, handlers),
        }),
      },
      now(),
    );
    return r.woken.length > 0 ? { claimed: r.claimed, waking: wakeAll(deps, r.woken) } : { claimed: r.claimed };
  };
}

async function wakeAll(deps: Pick<EventWaitsDeps, 'waits' | 'wake' | 'log'>, woken: readonly WokenRun[]): Promise<void> {
  await Promise.all(
    woken.map(async (w) => {
      await deps.wake(w.run);
      await deps.waits.ack(w.id);
      deps.log.debug({ wait: w.id, run: w.run }, 'run woken by an event');
    }),
  );
}

/** Redoes the wake-ups queued more than `graceMs` ago and never acknowledged (their waker died); how many. */
export async function sweepWakes(deps: Pick<EventWaitsDeps, 'waits' | 'wake' | 'log'>, now: number, graceMs = 5_000): Promise<number> {
  const stale = await deps.waits.stale(now - graceMs);
  await wakeAll(
    deps,
    stale.map((s) => ({ id: s.id, run: s.state.run })),
  );
  return stale.length;
}
