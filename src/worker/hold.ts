import type { WaitState } from '../queue/index.js';
import type { DurableRun, ParkedIn } from './durable.js';

/**
 * The due-time fence of durable runs: a run resumed at (or after) the due time
 * of the sleep or wait it parked in does not decide "timed out" or "not
 * cancelled" while a delivery accepted at or before that due time is not fanned
 * out yet (still in the inbox, in a live or dead pump's in-flight list, or in the
 * `events` queue): that delivery may be the event it waits for or a cancelOn
 * event. The run is held instead: parked again for a moment (no worker slot, no
 * attempt spent, still listed by `switchyard waits`), until the pending fan-out
 * set (src/queue/flow-pending.ts) holds nothing received at or before its due
 * time, or the delivery it waits for wakes it. A delivery dead-lettered leaves
 * the set, so it releases the hold; {@link HOLD_MAX_MS} bounds a hold whatever
 * the set says (a lost delivery's entry), after which the run decides anyway
 * and the worker logs a warning.
 *
 * Cost: one read of the set's first entry (ZRANGE 0 0 WITHSCORES), only for a
 * resumed run that is due and that some event could still answer (a wait, or a
 * cancelOn entry); a plain sleep is never held.
 */

/**
 * The longest a run is held past its due time, from its first hold: a dead pump's
 * in-flight list is recovered once its heartbeat lapses (three beats of 5 s, then
 * the next recovery pass of another pump: about 20 s), plus a generous margin for
 * the queue and fan-out behind it.
 */
export const HOLD_MAX_MS = 60_000;

/** A delivery accepted and not fanned out yet: its key and receipt (ms). */
export interface PendingDelivery {
  readonly key: string;
  readonly at: number;
}

export interface DueFenceDeps {
  /** The oldest entry of the pending fan-out set (FlowControl.oldestPending). */
  readonly oldestPending: () => Promise<PendingDelivery | null>;
  /** The states of waits (WaitStore.states). */
  readonly states: (ids: readonly string[]) => Promise<(WaitState | null)[]>;
  readonly now: number;
  /** Default {@link HOLD_MAX_MS}. */
  readonly maxMs?: number;
}

export type DueCheck =
  /** A cancelOn event answered the run while it slept or waited. */
  | { readonly kind: 'cancelled'; readonly hit: WaitState }
  /** Hold it until `until`: `pending` was received at or before its due time and is not fanned out yet. */
  | {
      readonly kind: 'hold';
      readonly parkedIn: ParkedIn;
      readonly pending: PendingDelivery;
      readonly since: number;
      readonly until: number;
      readonly waitIds: readonly string[];
    }
  /** Run it; `overdue`: it was held for `heldMs`, the cap, and `pending` is still not fanned out. */
  | { readonly kind: 'go'; readonly overdue?: { readonly parkedIn: ParkedIn; readonly pending: PendingDelivery; readonly heldMs: number } };

/** How long one hold lasts: short at first (a delivery in the inbox is usually fanned out within milliseconds), up to 2 s. */
export function holdStep(heldMs: number): number {
  return Math.min(2_000, Math.max(200, Math.round(heldMs / 2)));
}

/**
 * What a resumed run does before its handler runs again: cancelled (a cancelOn
 * entry was answered, or an operator cancelled it), held (see above), or run. `cancels`: the wait ids of its
 * cancelOn entries.
 */
export async function checkDue(
  run: Pick<DurableRun, 'parkedIn'> & Partial<Pick<DurableRun, 'cancelledBy'>>,
  cancels: readonly string[],
  deps: DueFenceDeps,
): Promise<DueCheck> {
  // Cancelled by an operator while parked (`switchyard waits cancel`), and taken by this worker before its job was removed.
  const by = run.cancelledBy?.() ?? null;
  if (by !== null) {
    return {
      kind: 'cancelled',
      hit: { status: 'cancelled', key: '', event: '', run: '', match: { deliveryKey: by, receivedAt: deps.now, body: '' } },
    };
  }
  const parkedIn = run.parkedIn();
  const answerable = parkedIn !== null && parkedIn.dueAt <= deps.now && (parkedIn.waitId !== undefined || cancels.length > 0);
  // The set is read before the waits' states: a delivery gone from it was fanned out, and fan-out answers the
  // waits (one script) before it takes the delivery off the set, so what it answered shows in the states read next.
  const pending = answerable ? await deps.oldestPending() : null;
  const fenced = parkedIn !== null && pending !== null && pending.at <= parkedIn.dueAt ? parkedIn : null;
  const waitId = fenced?.waitId;
  const states = await deps.states(waitId ? [...cancels, waitId] : cancels);
  const hit = states.slice(0, cancels.length).find((st): st is WaitState => st?.status === 'cancelled');
  if (hit) return { kind: 'cancelled', hit };
  // Answerable still: a wait not answered yet (one answered goes on with its event), or a sleep's cancelOn entries.
  const open = waitId ? states[cancels.length]?.status === 'pending' : states.some((st) => st?.status === 'pending');
  if (!fenced || !pending || !open) return { kind: 'go' };
  const since = fenced.heldSince ?? deps.now;
  const heldMs = deps.now - since;
  if (heldMs >= (deps.maxMs ?? HOLD_MAX_MS)) return { kind: 'go', overdue: { parkedIn: fenced, pending, heldMs } };
  return {
    kind: 'hold',
    parkedIn: fenced,
    pending,
    since,
    until: deps.now + holdStep(heldMs),
    waitIds: waitId ? [waitId, ...cancels] : [...cancels],
  };
}
