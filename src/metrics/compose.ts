import type { ReceiverHooks } from '../receiver/index.js';
import type { WorkerHooks } from './worker-hooks.js';

type Hook<A extends unknown[]> = ((...args: A) => void) | undefined;

/** Calls every defined hook in order; one observer that throws does not silence the others. */
function fanOut<A extends unknown[]>(hooks: ReadonlyArray<Hook<A>>): ((...args: A) => void) | undefined {
  const defined = hooks.filter((h): h is (...args: A) => void => h !== undefined);
  if (defined.length === 0) return undefined;
  return (...args: A) => {
    for (const h of defined) {
      try {
        h(...args);
      } catch {
        // Observers must not change the answer or the job's outcome.
      }
    }
  };
}

function compose<T extends object>(list: ReadonlyArray<T | undefined>, keys: ReadonlyArray<keyof T>): T {
  const present = list.filter((h): h is T => h !== undefined);
  const out: Partial<T> = {};
  for (const k of keys) {
    const fn = fanOut(present.map((h) => h[k] as Hook<unknown[]>));
    if (fn) (out as Record<keyof T, unknown>)[k] = fn;
  }
  return out as T;
}

// Exhaustive key lists: adding a hook to either interface fails to compile here until it is composed.
const RECEIVER_KEYS = { onDelivery: true, onStored: true, onDrained: true } satisfies Record<keyof ReceiverHooks, true>;
const WORKER_KEYS = {
  onHandler: true,
  onApiCall: true,
  onPause: true,
  onStart: true,
  onSkipped: true,
  onDebounced: true,
  onDispatched: true,
  onWait: true,
} satisfies Record<keyof WorkerHooks, true>;

/** One `ReceiverHooks` calling each given set (metrics, delivery log, capture) in order. */
export function composeReceiverHooks(...hooks: ReadonlyArray<ReceiverHooks | undefined>): ReceiverHooks {
  return compose<ReceiverHooks>(hooks, Object.keys(RECEIVER_KEYS) as Array<keyof ReceiverHooks>);
}

/** One `WorkerHooks` calling each given set in order. */
export function composeWorkerHooks(...hooks: ReadonlyArray<WorkerHooks | undefined>): WorkerHooks {
  return compose<WorkerHooks>(hooks, Object.keys(WORKER_KEYS) as Array<keyof WorkerHooks>);
}
