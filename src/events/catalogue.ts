import type { z } from 'zod';
import { Contact, ContactLifecycle } from '../api/schemas/contact.js';
import { Conversation } from '../api/schemas/conversation.js';
import { Lead } from '../api/schemas/lead.js';
import { Message } from '../api/schemas/message.js';
import type { Envelope, EnvelopeProblem } from './envelope.js';

/**
 * The event catalogue: the single source of truth for event names, the zod
 * schema of each event's `data`, and the TypeScript types derived from both
 * (the octokit/webhooks.js pattern). Names are those of the spec's Events table.
 */
export const EVENT_NAMES = [
  'message.received',
  'message.sent',
  'conversation.created',
  'conversation.opened',
  'conversation.closed',
  'conversation.assigned',
  'contact.created',
  'contact.lifecycle_changed',
  'lead.created',
  'lead.won',
  'lead.lost',
] as const;

/** One of the 11 event names the workspace pushes. */
export type EventName = (typeof EVENT_NAMES)[number];

/**
 * Schema of `data` per event. The payload carries the API's resource shapes
 * (spec, Events rule 2); every schema is a `looseObject`, so fields the service
 * adds later are kept, not rejected. `satisfies` makes a missing or extra name
 * a compile error.
 */
export const EVENT_SCHEMAS = {
  'message.received': Message,
  'message.sent': Message,
  'conversation.created': Conversation,
  'conversation.opened': Conversation,
  'conversation.closed': Conversation,
  'conversation.assigned': Conversation,
  'contact.created': Contact,
  'contact.lifecycle_changed': ContactLifecycle,
  'lead.created': Lead,
  'lead.won': Lead,
  'lead.lost': Lead,
} as const satisfies { readonly [N in EventName]: z.ZodType };

/**
 * `T` without the `[k: string]: unknown` index signatures that `looseObject`
 * adds, at every depth. At runtime unknown fields are kept (the service may add
 * some); in types they are dropped so a misspelled field is a compile error
 * instead of an `unknown`. The result is still assignable to the API's types.
 */
export type KnownFields<T> = T extends readonly (infer U)[]
  ? KnownFields<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : number extends K ? never : K]: KnownFields<T[K]> }
    : T;

/** The parsed `data` of event `N`: its resource, with only the fields the schema names. */
export type EventData<N extends EventName> = KnownFields<z.output<(typeof EVENT_SCHEMAS)[N]>>;

/**
 * A validated event. Distributive over `N`, so `WorkspaceEvent<'a' | 'b'>` is
 * a union of one object type per name and checking `event.name` narrows `data`.
 */
export type WorkspaceEvent<N extends EventName = EventName> = N extends EventName
  ? {
      /** Envelope id; null when the delivery carried none (its key is then the body hash). */
      readonly id: string | null;
      readonly name: N;
      readonly createdAt: string | null;
      readonly data: EventData<N>;
    }
  : never;

const NAME_SET: ReadonlySet<string> = new Set(EVENT_NAMES);

/** True when `s` is one of the catalogue's event names (exact, case-sensitive). */
export function isEventName(s: unknown): s is EventName {
  return typeof s === 'string' && NAME_SET.has(s);
}

/** Optimal-string-alignment distance: Levenshtein plus adjacent transpositions ("recieved"). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      row[j] = v;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate closest to `input` by edit distance (case-insensitive), or
 * null when none is within max(2, a quarter of the input's length): a guess
 * further away than that misleads more than it helps. Ties go to the earlier candidate.
 */
export function closest<T extends string>(input: string, candidates: readonly T[]): T | null {
  const needle = input.trim().toLowerCase();
  const limit = Math.max(2, Math.floor(needle.length / 4));
  let best: T | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const dist = editDistance(needle, c.toLowerCase());
    if (dist < bestDistance) [best, bestDistance] = [c, dist];
  }
  return bestDistance <= limit ? best : null;
}

/** Did-you-mean for an event name: the closest catalogue name, or null when nothing is close. */
export function suggestEventName(s: string): EventName | null {
  return closest(s, EVENT_NAMES);
}

/** Why a delivery is not a valid event: the envelope's own problems, then the catalogue's. */
export type InvalidEventReason = EnvelopeProblem | 'unknown_event' | 'invalid_data';

/** Outcome of {@link validateEvent}; failures carry what the dead-letter listing shows. */
export type ValidationResult =
  | { readonly ok: true; readonly event: WorkspaceEvent }
  | {
      readonly ok: false;
      readonly reason: InvalidEventReason;
      readonly message: string;
      /** zod issues as `path: message`, the path rooted at `data` (e.g. `data.channel.type: …`). */
      readonly issues?: readonly string[];
    };

const PROBLEM_MESSAGES: Record<EnvelopeProblem, string> = {
  invalid_json: 'the body is not valid JSON',
  not_an_object: 'the body is JSON but not an object',
  missing_event_name: 'the envelope has no event name (looked for "event", "type", "event_type")',
};

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : `${acc}.${String(k)}`),
    'data',
  );
}

/**
 * Checks a parsed envelope against the catalogue. Pure and total: every
 * input yields a result, nothing throws, so the worker can dead-letter an
 * invalid payload with its reason instead of retrying it.
 */
export function validateEvent(envelope: Envelope): ValidationResult {
  if (envelope.problem !== null) {
    return { ok: false, reason: envelope.problem, message: PROBLEM_MESSAGES[envelope.problem] };
  }
  const name = envelope.name ?? '';
  if (!isEventName(name)) {
    const hint = suggestEventName(name);
    return {
      ok: false,
      reason: 'unknown_event',
      message: `unknown event "${name}"` + (hint ? `; did you mean "${hint}"?` : ''),
    };
  }
  const parsed = EVENT_SCHEMAS[name].safeParse(envelope.data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`);
    return {
      ok: false,
      reason: 'invalid_data',
      message: `data of "${name}" does not match its schema (${issues.length} issue${issues.length === 1 ? '' : 's'})`,
      issues,
    };
  }
  // The cast joins a name and the data its own schema just accepted; TypeScript
  // cannot correlate the two through the indexed access.
  const event = { id: envelope.id, name, createdAt: envelope.createdAt, data: parsed.data } as WorkspaceEvent;
  return { ok: true, event };
}
