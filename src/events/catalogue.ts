import type { z } from 'zod';
import { Contact, ContactLifecycle, Conversation, Lead, Message, Order, OrderStatus, Task } from '../spec/schemas/index.js';
import { DERIVED_EVENT_NAMES, EVENT_NAMES, type DerivedEventName, type EventName } from '../spec/index.js';
import { closest } from '../util/index.js';
import type { Envelope, EnvelopeProblem } from './envelope.js';

/**
 * The event catalogue: the zod schema of each event's `data` and the
 * TypeScript types derived from the names and the schemas (the
 * octokit/webhooks.js pattern). The names are the spec's (src/spec/events.ts).
 */
export {
  DERIVED_EVENT_NAMES,
  EVENT_NAMES,
  WEBHOOK_EVENT_NAMES,
  type DerivedEventName,
  type EventName,
  type WebhookEventName,
} from '../spec/index.js';

const DERIVED_SET: ReadonlySet<string> = new Set(DERIVED_EVENT_NAMES);

/**
 * True for an event Switchyard derives by polling (`order.created`,
 * `order.status_changed`, `task.due`) rather than receives as a webhook. The
 * catalogue validates them like any event; the poller of the worker processes
 * is their producer (docs/handlers.md, "Polled sources").
 */
export function isDerivedEvent(name: unknown): name is DerivedEventName {
  return typeof name === 'string' && DERIVED_SET.has(name);
}

/** `data` of `order.status_changed`: the order as polled, plus the status it had when last seen. */
export const OrderStatusChange = Order.extend({ previous_status: OrderStatus });

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
  // Derived by polling (DERIVED_EVENT_NAMES): the resource as the listing answered it.
  'order.created': Order,
  'order.status_changed': OrderStatusChange,
  'task.due': Task,
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
  return path.reduce<string>((acc, k) => (typeof k === 'number' ? `${acc}[${k}]` : `${acc}.${String(k)}`), 'data');
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
