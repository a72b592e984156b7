import { EVENT_NAMES, isEventName, suggestEventName, type EventName } from '../events/index.js';
import { durationOption } from '../util/index.js';
import type { KeyOption } from './run-policy.js';
import { MATCH_FORMS, matchOption, unknownOption } from './workflow-calls.js';
import type { MatchOption } from './workflow.js';
import type { StateSchema } from './state-value.js';

/** A handler's workflow options, defaults applied (from `cancelOn` and `state`). */
export interface WorkflowPolicy {
  /** Events that cancel a sleeping or waiting run of the handler. */
  readonly cancelOn: readonly { readonly event: EventName; readonly match: MatchOption }[];
  /**
   * The key of `ctx.state` (the handler's `orderBy` unless `state.key` is given) and how long a state is kept after its
   * last write; null: no `ctx.state`.
   */
  readonly state: { readonly key: KeyOption; readonly ttlMs: number; readonly schema?: StateSchema | null } | null;
  /** Event names the handler's waits wait for, watched from start-up (their lookback reaches back from the first run). */
  readonly waitsFor: readonly EventName[];
}

/**
 * The policy of a handler without workflow options, and of a handler object made by an older copy of the
 * package (no `workflow` member): nothing cancels it, no `ctx.state`, no watched names.
 */
export const NO_WORKFLOW: WorkflowPolicy = { cancelOn: [], state: null, waitsFor: [] };

/** How long a state is kept after its last write unless `state.ttl` says otherwise. */
export const DEFAULT_STATE_TTL_MS = 30 * 86_400_000;

const show = (value: unknown): string => (typeof value === 'function' ? 'a function' : (JSON.stringify(value) ?? String(value)));

/** A plain object's own keys beyond `allowed` are a definition error (with a did-you-mean). */
function noUnknownKeys(
  name: string,
  value: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
  fail: (msg: string) => never,
): void {
  const problem = unknownOption(`"${name}"`, value, allowed);
  if (problem !== null) fail(problem);
}

/**
 * The most `cancelOn` entries a handler declares: a run's entries are `<scope>:c:0` … in the wait store, and
 * cancelling a parked run forgets that many (src/queue/waits/ops.ts CANCEL_ON_IDS, the same number).
 */
export const MAX_CANCEL_ON = 64;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates and normalizes `cancelOn`, `state` and `waitsFor` of a definition; `fail`
 * throws the definition error naming the handler. `on` is the handler's
 * events (a built-in match key must be carried by them too: it is compared
 * with the run's own event's); `orderBy` is the state's key when `state.key`
 * is absent.
 */
export function workflowPolicy(
  def: Readonly<Record<string, unknown>>,
  orderBy: KeyOption | null,
  fail: (msg: string) => never,
  on: readonly EventName[] = [],
): WorkflowPolicy {
  const { cancelOn = [], state, waitsFor = [] } = def;
  const own = on.map((event) => ({ event, role: 'in "on"' }));
  if (!Array.isArray(cancelOn)) fail(`"cancelOn" must be an array of { event, match }, got ${show(cancelOn)}`);
  if (cancelOn.length > MAX_CANCEL_ON) fail(`"cancelOn" has ${cancelOn.length} entries; a handler may declare at most ${MAX_CANCEL_ON}`);
  const entries = (cancelOn as unknown[]).map((entry, i) => {
    const name = `cancelOn[${i}]`;
    if (!isRecord(entry)) return fail(`"${name}" must be an object { event, match }, got ${show(entry)}`);
    noUnknownKeys(name, entry, ['event', 'match'], fail);
    const { event, match } = entry;
    if (!isEventName(event)) {
      const hint = typeof event === 'string' ? suggestEventName(event) : null;
      return fail(
        `"${name}.event": unknown event ${show(event)}` +
          (hint ? `; did you mean "${hint}"?` : `; known events: ${EVENT_NAMES.join(', ')}`),
      );
    }
    if (match === undefined) return fail(`"${name}" (event "${event}") needs a "match": ${MATCH_FORMS}`);
    return Object.freeze({
      event,
      match: matchOption(`${name}.match`, match, [{ event, role: 'its event' }, ...own.filter((o) => o.event !== event)], fail),
    });
  });
  let st: WorkflowPolicy['state'] = null;
  if (state !== undefined) {
    if (!isRecord(state)) return fail(`"state" must be an object { key?, ttl?, schema? }, got ${show(state)}`);
    noUnknownKeys('state', state, ['key', 'ttl', 'schema'], fail);
    const { key, ttl, schema = null } = state;
    if (schema !== null && (typeof schema !== 'object' || typeof (schema as { safeParse?: unknown }).safeParse !== 'function')) {
      fail(`"state.schema" must be a zod schema such as z.object({ count: z.number() }), got ${show(schema)}`);
    }
    let ttlMs = DEFAULT_STATE_TTL_MS;
    if (ttl !== undefined) {
      const ms = durationOption(ttl, false);
      if (ms === null) fail(`"state.ttl" must be a positive duration such as '30d' or a number of milliseconds, got ${show(ttl)}`);
      ttlMs = ms;
    }
    let stateKey: KeyOption | null = orderBy;
    if (key !== undefined) stateKey = matchOption('state.key', key, own, fail, true) as KeyOption;
    if (stateKey === null)
      fail('"state" needs a "key" (\'conversation\', \'contact\' or a function (event) => key) when the handler has no "orderBy"');
    st = Object.freeze({ key: stateKey, ttlMs, ...(schema !== null ? { schema: schema as StateSchema } : {}) });
  } else if (orderBy !== null) {
    st = Object.freeze({ key: orderBy, ttlMs: DEFAULT_STATE_TTL_MS });
  }
  if (!Array.isArray(waitsFor)) fail(`"waitsFor" must be an array of event names, got ${show(waitsFor)}`);
  const waited = (waitsFor as unknown[]).map((event, i) => {
    if (isEventName(event)) return event;
    const hint = typeof event === 'string' ? suggestEventName(event) : null;
    return fail(
      `"waitsFor[${i}]": unknown event ${show(event)}` + (hint ? `; did you mean "${hint}"?` : `; known events: ${EVENT_NAMES.join(', ')}`),
    );
  });
  return Object.freeze({ cancelOn: Object.freeze(entries), state: st, waitsFor: Object.freeze([...new Set(waited)]) });
}
