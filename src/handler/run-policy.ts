import type { EventName, WorkspaceEvent } from '../events/index.js';
import { formatDuration, type Duration } from './options.js';
import { durationOption, PRIORITIES, type Priority } from '../util/index.js';

/** Which of the API budget a handler's runs get first: `high` before `normal` before `low`. */
export { PRIORITIES, type Priority } from '../util/index.js';

/** A built-in key: the event's conversation id or contact id (see {@link KEY_SOURCES}). */
export type BuiltinKey = 'conversation' | 'contact';

/** How runs are grouped: a built-in key, or a function of the event (undefined: this event has no key). */
export type KeyOption<N extends EventName = EventName> = BuiltinKey | ((event: WorkspaceEvent<N>) => string | number | undefined | null);

/** A handler's `debounce` option. */
export interface DebounceOptions<N extends EventName = EventName> {
  /** Events with the same key form one burst. */
  readonly key: KeyOption<N>;
  /** Run once no further event of the burst arrived for this long (`'5s'`). */
  readonly wait: Duration;
  /** Never later than this after the burst's first event (default: 10 × wait). */
  readonly maxWait?: Duration;
}

/**
 * A handler's run policy (priority, orderBy, maxAge, skipStale, debounce, onDead) with defaults
 * applied, durations in milliseconds. Its public name, `FlowPolicy`, and `Handler.flow` stay as
 * published; queue/flow*.ts is the flow control that carries it out.
 */
export interface FlowPolicy {
  readonly priority: Priority;
  readonly orderBy: KeyOption | null;
  readonly maxAgeMs: number | null;
  readonly skipStale: boolean;
  readonly debounce: { readonly key: KeyOption; readonly waitMs: number; readonly maxWaitMs: number } | null;
  /** With `orderBy`: what a dead-lettered run does to later runs of its key. */
  readonly onDead: 'release' | 'block';
}

export const DEFAULT_RUN_POLICY: FlowPolicy = Object.freeze({
  priority: 'normal',
  orderBy: null,
  maxAgeMs: null,
  skipStale: false,
  debounce: null,
  onDead: 'release',
});

/**
 * Where each event's conversation and contact ids come from (the payload's
 * resource shape). `null`: the event carries no such id, so a handler on it
 * cannot use that built-in key (a definition error says so).
 */
export const KEY_SOURCES: { readonly [N in EventName]: { readonly conversation: string | null; readonly contact: string | null } } = {
  'message.received': { conversation: 'data.conversation_id', contact: null },
  'message.sent': { conversation: 'data.conversation_id', contact: null },
  'conversation.created': { conversation: 'data.id', contact: 'data.contact_id' },
  'conversation.opened': { conversation: 'data.id', contact: 'data.contact_id' },
  'conversation.closed': { conversation: 'data.id', contact: 'data.contact_id' },
  'conversation.assigned': { conversation: 'data.id', contact: 'data.contact_id' },
  'contact.created': { conversation: null, contact: 'data.id' },
  'contact.lifecycle_changed': { conversation: null, contact: 'data.contact_id' },
  'lead.created': { conversation: null, contact: 'data.contact_id' },
  'lead.won': { conversation: null, contact: 'data.contact_id' },
  'lead.lost': { conversation: null, contact: 'data.contact_id' },
  'order.created': { conversation: 'data.conversation_id', contact: 'data.contact_id' },
  'order.status_changed': { conversation: 'data.conversation_id', contact: 'data.contact_id' },
  'task.due': { conversation: null, contact: 'data.contact_id' },
};

/** The key of one event, as a string, or null when it has none. */
export function keyOf(option: KeyOption, event: { name: EventName; data: unknown }): string | null {
  if (typeof option === 'function') {
    const k = option(event as WorkspaceEvent);
    return k === undefined || k === null || k === '' ? null : String(k);
  }
  const path = KEY_SOURCES[event.name][option];
  if (path === null) return null;
  let v: unknown = event;
  for (const part of path.split('.')) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[part] : undefined;
  return typeof v === 'number' || (typeof v === 'string' && v !== '') ? `${option}:${v}` : null;
}

function keyOption(name: string, value: unknown, on: readonly EventName[], fail: (msg: string) => never): KeyOption {
  if (typeof value === 'function') return value as KeyOption;
  if (value !== 'conversation' && value !== 'contact') {
    return fail(`"${name}" must be 'conversation', 'contact' or a function (event) => key, got ${JSON.stringify(value)}`);
  }
  const missing = on.filter((n) => KEY_SOURCES[n][value] === null);
  if (missing.length > 0) {
    const carries = missing.length === 1 ? 'that event carries' : 'those events carry';
    fail(`"${name}: '${value}'" cannot be used with ${missing.join(', ')}: ${carries} no ${value} id; use a function (event) => key`);
  }
  return value;
}

/** Validates the flow options of a definition; `fail` throws the definition error naming the handler. */
export function runPolicy(def: Readonly<Record<string, unknown>>, on: readonly EventName[], fail: (msg: string) => never): FlowPolicy {
  const { priority = 'normal', orderBy, maxAge, skipStale = false, debounce, onDead } = def;
  if (typeof priority !== 'string' || !PRIORITIES.includes(priority as Priority)) {
    fail(`"priority" must be 'high', 'normal' or 'low', got ${JSON.stringify(priority)}`);
  }
  const order = orderBy === undefined ? null : keyOption('orderBy', orderBy, on, fail);
  let maxAgeMs: number | null = null;
  if (maxAge !== undefined) {
    maxAgeMs = durationOption(maxAge, false);
    if (maxAgeMs === null)
      fail(`"maxAge" must be a positive duration such as '10m' or a number of milliseconds, got ${JSON.stringify(maxAge)}`);
  }
  if (typeof skipStale !== 'boolean') fail(`"skipStale" must be true or false, got ${JSON.stringify(skipStale)}`);
  if (skipStale && order === null) fail('"skipStale" needs "orderBy": an event is stale against the last one applied for the same key');
  if (onDead !== undefined && onDead !== 'release' && onDead !== 'block')
    fail(`"onDead" must be 'release' or 'block', got ${JSON.stringify(onDead)}`);
  if (onDead !== undefined && order === null)
    fail('"onDead" needs "orderBy": it says whether a dead-lettered run holds up later runs of its key');
  let deb: FlowPolicy['debounce'] = null;
  if (debounce !== undefined) {
    if (typeof debounce !== 'object' || debounce === null) fail('"debounce" must be an object { key, wait, maxWait? }');
    const { key, wait, maxWait, ...rest } = debounce as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) fail(`"debounce" has an unknown option "${extra}"; expected key, wait and maxWait`);
    const waitMs = durationOption(wait, false);
    if (waitMs === null) fail(`"debounce.wait" must be a positive duration such as '5s', got ${JSON.stringify(wait)}`);
    const maxWaitMs = maxWait === undefined ? waitMs * 10 : durationOption(maxWait, false);
    if (maxWaitMs === null || maxWaitMs < waitMs) {
      fail(`"debounce.maxWait" must be a duration of at least debounce.wait (${formatDuration(waitMs)}), got ${JSON.stringify(maxWait)}`);
    }
    if (order !== null) {
      fail(
        '"debounce" and "orderBy" cannot be combined yet: ' +
          'a debounced handler already runs at most one burst per key at a time; drop one of them',
      );
    }
    deb = Object.freeze({ key: keyOption('debounce.key', key, on, fail), waitMs: waitMs, maxWaitMs: maxWaitMs });
  }
  return Object.freeze({
    priority: priority as Priority,
    orderBy: order,
    maxAgeMs,
    skipStale: skipStale,
    debounce: deb,
    onDead: onDead ?? 'release',
  });
}

/** One line for `switchyard handlers`, e.g. `priority high · orderBy conversation · maxAge 10m`. */
export function describeRunPolicy(p: FlowPolicy): string {
  const key = (k: KeyOption) => (typeof k === 'function' ? 'function' : k);
  const parts = [`priority ${p.priority}`];
  if (p.orderBy) parts.push(`orderBy ${key(p.orderBy)}${p.onDead === 'block' ? ' (dead run blocks its key)' : ''}`);
  if (p.skipStale) parts.push('skipStale');
  if (p.maxAgeMs !== null) parts.push(`maxAge ${formatDuration(p.maxAgeMs)}`);
  if (p.debounce)
    parts.push(`debounce ${key(p.debounce.key)} wait ${formatDuration(p.debounce.waitMs)} maxWait ${formatDuration(p.debounce.maxWaitMs)}`);
  return parts.join(' · ');
}
