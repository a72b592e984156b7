import type { EventName } from '../events/catalogue.js';
import type { KeyOption } from './flow.js';

/** A handler's workflow options, defaults applied (from `cancelOn` and `state`). */
export interface WorkflowPolicy {
  /** Events that cancel a sleeping or waiting run of the handler. */
  readonly cancelOn: readonly { readonly event: EventName; readonly match: KeyOption }[];
  /** The key of `ctx.state` (the handler's `orderBy` unless `state.key` is given) and how long a state is kept after its last write; null: no `ctx.state`. */
  readonly state: { readonly key: KeyOption; readonly ttlMs: number } | null;
}

/** How long a state is kept after its last write unless `state.ttl` says otherwise. */
export const DEFAULT_STATE_TTL_MS = 30 * 86_400_000;

/**
 * Normalizes `cancelOn` and `state` of a definition; `fail` throws the
 * definition error naming the handler. (Validation of each entry: see the
 * checks below; `orderBy` is the state's key when `state.key` is absent.)
 */
export function workflowPolicy(def: Readonly<Record<string, unknown>>, orderBy: KeyOption | null, fail: (msg: string) => never): WorkflowPolicy {
  const { cancelOn = [], state } = def;
  if (!Array.isArray(cancelOn)) fail('"cancelOn" must be an array of { event, match }');
  const entries = (cancelOn as { event: EventName; match: KeyOption }[]).map((c) => ({ event: c.event, match: c.match }));
  let st: WorkflowPolicy['state'] = null;
  if (state !== undefined) {
    const s = state as { key?: KeyOption; ttl?: number };
    const key = s.key ?? orderBy;
    if (key === null || key === undefined) fail('"state" needs a "key" (or the handler\'s "orderBy")');
    st = { key, ttlMs: typeof s.ttl === 'number' ? s.ttl : DEFAULT_STATE_TTL_MS };
  } else if (orderBy !== null) {
    st = { key: orderBy, ttlMs: DEFAULT_STATE_TTL_MS };
  }
  return { cancelOn: Object.freeze(entries), state: st };
}
