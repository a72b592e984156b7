import type { SavedEvents, WebhookEmitter } from './events/emitter.js';
import type { Entry } from './idempotency-store.js';
import { IdSequence } from './ids.js';
import type { QuotaEntry } from './rate-limit.js';
import type { SandboxSettings, SandboxState } from './state.js';
import type { Token, Workspace } from './types.js';

/** Format of a saved sandbox; a file of another version is refused, never half read. */
export const SNAPSHOT_VERSION = 1;

/**
 * What `--keep-sandbox` keeps: the records of every workspace and the id
 * counter, the tokens and switches, the burst, the clock's offset,
 * remembered Idempotency-Keys and quotas, and the events with their
 * deliveries. Burst windows, the request log and fault rules start empty again.
 */
export interface SandboxSnapshot {
  version: typeof SNAPSHOT_VERSION;
  savedAt: string;
  /** This sandbox's lifetime id (made when it started fresh): whoever keeps claims per sandbox names them by it. */
  generation: string;
  clockOffsetMs: number;
  nextId: number;
  workspaces: Workspace[];
  tokens: Token[];
  settings: SandboxSettings;
  /** Requests per 10 s per token (as `POST /_sandbox/burst` last set it). */
  burst: number;
  /** Workspaces with a burst of their own: [workspace id, burst] (absent in files saved before there were any). */
  workspaceBursts?: [number, number][];
  idempotency: [string, Entry][];
  quota: [number, QuotaEntry][];
  events: SavedEvents;
}

/** The sandbox's state now, as a snapshot. */
export function snapshotOf(state: SandboxState, emitter: WebhookEmitter): SandboxSnapshot {
  return {
    version: SNAPSHOT_VERSION,
    savedAt: new Date().toISOString(),
    generation: state.generation,
    clockOffsetMs: state.clock.offsetMs,
    nextId: state.ids.peek(),
    workspaces: [...state.workspaces.values()],
    tokens: state.tokens,
    settings: { ...state.settings },
    burst: state.burst.burst,
    workspaceBursts: [...state.workspaceBursts],
    idempotency: state.idempotency.finished(),
    quota: state.quota.entries(),
    events: emitter.saved(),
  };
}

/** Puts a snapshot back into a sandbox that has not served anything yet. */
export function restoreSnapshot(state: SandboxState, emitter: WebhookEmitter, saved: SandboxSnapshot): void {
  state.generation = saved.generation;
  state.clock.offsetMs = saved.clockOffsetMs;
  state.ids = new IdSequence(saved.nextId);
  // A file saved before workspaces had keys: the seeded two are acme and other, any other is ws<n>.
  saved.workspaces.forEach((ws, i) => {
    ws.key ??= ['acme', 'other'][i] ?? `ws${i + 1}`;
  });
  state.workspaces = new Map(saved.workspaces.map((ws) => [ws.id, ws]));
  state.tokens = saved.tokens;
  Object.assign(state.settings, saved.settings);
  state.burst.burst = saved.burst;
  state.workspaceBursts.clear();
  for (const [id, burst] of saved.workspaceBursts ?? []) state.workspaceBursts.set(id, burst);
  state.idempotency.restore(saved.idempotency);
  state.quota.restore(saved.quota);
  emitter.restore(saved.events);
}

// Records are kept in Maps keyed by id; JSON has none, so a Map is written as {"$map": [[key, value], …]}.
const replacer = (_key: string, value: unknown): unknown => (value instanceof Map ? { $map: [...value] } : value);
const reviver = (_key: string, value: unknown): unknown =>
  value !== null && typeof value === 'object' && Array.isArray((value as { $map?: unknown }).$map)
    ? new Map((value as { $map: [unknown, unknown][] }).$map)
    : value;

export const encodeSnapshot = (s: SandboxSnapshot): string => JSON.stringify(s, replacer);

/** Reads a saved sandbox; what is not one of this version is an Error saying what is wrong. */
export function decodeSnapshot(text: string): SandboxSnapshot {
  let value: unknown;
  try {
    value = JSON.parse(text, reviver);
  } catch (err) {
    throw new Error(`it is not JSON (${(err as Error).message})`, { cause: err });
  }
  const s = value as Partial<SandboxSnapshot> | null;
  if (s === null || typeof s !== 'object') throw new Error('it is not a saved sandbox');
  if (s.version !== SNAPSHOT_VERSION)
    throw new Error(`it is version ${String(s.version)} of the format; this switchyard reads version ${SNAPSHOT_VERSION}`);
  const missing = (
    ['generation', 'clockOffsetMs', 'nextId', 'workspaces', 'tokens', 'settings', 'burst', 'idempotency', 'quota', 'events'] as const
  ).filter((k) => s[k] === undefined);
  if (missing.length) throw new Error(`it lacks ${missing.join(', ')}`);
  return s as SandboxSnapshot;
}
