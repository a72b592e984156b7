import type { WorkspaceEvent } from '../events/index.js';
import { HandlerConfigError, keyOf, checkStateValue, stateLabel, type HandlerState, type WorkflowPolicy } from '../handler/index.js';

/**
 * `ctx.state` without Redis, for runs on a virtual clock (switchyard/testing's
 * testHandler, `replay --inline`): one JSON value per state key in a Map, kept
 * `state.ttl` after its last write on the run's clock; the key rules and
 * errors are the worker's (src/worker/durable.ts).
 */

/** A state value and when it was last written (ms, virtual clock). */
export interface StoredState {
  readonly value: unknown;
  readonly writtenAt: number;
}

/** The values of one handler's states, by state key (`conversation:38`). Share one across runs to keep state between them. */
export type VirtualStateStore = Map<string, StoredState>;

/** One read or write of `ctx.state`: `get` with the value read, `set` and `update` with the value written (null: none). */
export interface StateAccess {
  readonly op: 'get' | 'set' | 'update';
  readonly key: string;
  readonly value: unknown;
}

export interface VirtualStateDeps {
  readonly handlerId: string;
  readonly policy: WorkflowPolicy;
  /** The run's own event: its state key. */
  readonly event: WorkspaceEvent;
  readonly store: VirtualStateStore;
  /** The run's virtual time now (ms). */
  readonly clock: () => number;
  /** Each read and write, in order. */
  readonly onAccess?: (access: StateAccess) => void;
}

/** Through JSON, as the worker keeps it (a value read is never the object written). */
export const jsonCopy = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

/** The `ctx.state` of one run on `deps.store`. */
export function virtualState(deps: VirtualStateDeps): HandlerState {
  const { policy, store } = deps;
  const stateKey = (): string => {
    const st = policy.state;
    if (st === null) {
      throw new HandlerConfigError(
        `handler "${deps.handlerId}" uses ctx.state but has neither "orderBy" nor "state: { key }": give it one of them`,
      );
    }
    const key = keyOf(st.key, deps.event);
    if (key === null)
      throw new HandlerConfigError(`handler "${deps.handlerId}" uses ctx.state, but its event ${deps.event.name} has no state key`);
    return key;
  };
  const read = (key: string): unknown => {
    const stored = store.get(key);
    if (stored === undefined || stored.value === null) return null;
    if (policy.state && deps.clock() - stored.writtenAt > policy.state.ttlMs) return null;
    return jsonCopy(stored.value);
  };
  const write = (op: 'set' | 'update', key: string, next: unknown): unknown => {
    checkStateValue(stateLabel(op, deps.handlerId, key), next, policy.state?.schema ?? null);
    const value = jsonCopy(next);
    store.set(key, { value, writtenAt: deps.clock() });
    deps.onAccess?.({ op, key, value: jsonCopy(value) });
    return jsonCopy(value);
  };
  return {
    async get() {
      const key = stateKey();
      const value = read(key);
      deps.onAccess?.({ op: 'get', key, value: jsonCopy(value) });
      return value;
    },
    async set(next) {
      write('set', stateKey(), next);
    },
    async update(fn) {
      const key = stateKey();
      return write('update', key, await fn(read(key)));
    },
  };
}
