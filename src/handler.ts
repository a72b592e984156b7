import { EVENT_NAMES, isEventName, suggestEventName, type EventName, type WorkspaceEvent } from './events/catalogue.js';
import { ABILITIES, type Ability } from './spec/abilities.js';
import { closest } from './util/closest.js';
import type { ApiClient } from './api/client.js';
import type { Logger } from './log.js';

/**
 * A handler tells the worker to dead-letter the job at once, without further
 * attempts, by throwing this (bullmq's own class, so BullMQ honours it).
 */
export { UnrecoverableError } from 'bullmq';

/** Token abilities (the API's vocabulary, kept in src/spec); a handler lists those it needs. */
export { ABILITIES, type Ability } from './spec/abilities.js';

/** What a handler receives besides the event, bound to one delivery and one handler. */
export interface HandlerContext {
  /**
   * Workspace REST client bound to this run: its Idempotency-Keys derive from
   * (delivery, handler, step), so a retried job replays instead of writing twice.
   */
  readonly api: ApiClient;
  /**
   * The process environment, read once at start-up (handler settings such as
   * FOLLOW_UP_DAYS), without Switchyard's own secrets: WEBHOOK_SECRETS,
   * WORKSPACE_API_TOKEN, ADMIN_USER, ADMIN_PASSWORD, REDIS_URL, every REDIS* and
   * SENTINEL* variable, and their `_FILE` variants are never in it.
   */
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Runs `fn` once per delivery and handler under `name` and returns its
   * result; a retried job gets the stored result without running `fn` again.
   * The result is stored as JSON, so it must survive a JSON round trip.
   */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** pino child bound to delivery, event and handler. */
  readonly log: Logger;
  readonly delivery: {
    /** Delivery key: the envelope id, else `sha256:` + hex of the raw body. */
    readonly key: string;
    readonly receivedAt: string;
    /** 1 on the first run, counting up on retries. */
    readonly attempt: number;
  };
  /** Aborted when the worker shuts down or the job is cancelled. */
  readonly signal: AbortSignal;
}

/** What `defineHandler` takes: `handle` sees only the events named in `on`. */
export interface HandlerDefinition<On extends readonly EventName[]> {
  /** Unique among loaded handlers; part of job ids and idempotency keys, so keep it stable. */
  readonly id: string;
  readonly on: On;
  readonly abilities?: readonly Ability[];
  handle(event: WorkspaceEvent<On[number]>, ctx: HandlerContext): Promise<void> | void;
}

/** Marker on every handler; `Symbol.for` so copies of this module loaded twice agree. */
export const HANDLER: unique symbol = Symbol.for('switchyard.handler');

/**
 * A defined handler: frozen, validated, recognisable by {@link isHandler}.
 * `handle` is a method (bivariant) so a `Handler<'lead.won'>` can be held as a
 * `Handler`; the runner only ever passes it events named in `on`.
 */
export interface Handler<N extends EventName = EventName> {
  readonly [HANDLER]: true;
  readonly id: string;
  readonly on: readonly N[];
  readonly abilities: readonly Ability[];
  /** Always returns a promise; a synchronous throw becomes a rejection. */
  handle(event: WorkspaceEvent<N>, ctx: HandlerContext): Promise<void>;
}

/** A handler definition that breaks the contract; thrown by `defineHandler`. */
export class HandlerDefinitionError extends Error {
  readonly code = 'invalid_handler';
  constructor(
    message: string,
    /** The handler's id when it had a usable one. */
    readonly handlerId: string | null,
  ) {
    super(message);
    this.name = 'HandlerDefinitionError';
  }
}

const ID_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
const ABILITY_SET: ReadonlySet<string> = new Set(ABILITIES);

/** True for a value made by `defineHandler` (the loader's test for a module's default export). */
export function isHandler(value: unknown): value is Handler {
  return typeof value === 'object' && value !== null && (value as { [HANDLER]?: unknown })[HANDLER] === true;
}

/**
 * Validates a handler definition and returns it frozen. TypeScript already
 * rejects a misspelled event name; the runtime checks are for `.js` modules and
 * stop start-up with a message that names the handler and suggests a fix.
 */
export function defineHandler<const On extends readonly EventName[]>(def: HandlerDefinition<On>): Handler<On[number]> {
  const input: unknown = def;
  if (typeof input !== 'object' || input === null) throw new HandlerDefinitionError('defineHandler expects an object { id, on, handle }', null);
  const { id, on, abilities = [], handle } = input as Record<string, unknown>;
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    throw new HandlerDefinitionError(
      `handler id ${JSON.stringify(id)} is invalid: use lowercase letters, digits, ".", "_" or "-", starting with a letter or digit`,
      null,
    );
  }
  const fail = (msg: string): never => {
    throw new HandlerDefinitionError(`handler "${id}": ${msg}`, id);
  };
  if (!Array.isArray(on) || on.length === 0) fail('"on" must be a non-empty array of event names');
  const names = on as unknown[];
  for (const [i, name] of names.entries()) {
    if (!isEventName(name)) {
      const hint = typeof name === 'string' ? suggestEventName(name) : null;
      fail(`unknown event ${JSON.stringify(name)}` + (hint ? `; did you mean "${hint}"?` : `; known events: ${EVENT_NAMES.join(', ')}`));
    }
    if (names.indexOf(name) !== i) fail(`event "${String(name)}" is listed twice in "on"`);
  }
  if (!Array.isArray(abilities)) fail('"abilities" must be an array of ability names');
  for (const ability of abilities as unknown[]) {
    if (typeof ability !== 'string' || !ABILITY_SET.has(ability)) {
      const hint = typeof ability === 'string' ? closest(ability, ABILITIES) : null;
      fail(`unknown ability ${JSON.stringify(ability)}` + (hint ? `; did you mean "${hint}"?` : `; known abilities: ${ABILITIES.join(', ')}`));
    }
  }
  if (typeof handle !== 'function') fail('"handle" must be a function (event, ctx) => Promise<void>');
  const run = handle as (event: unknown, ctx: HandlerContext) => unknown;
  return Object.freeze({
    [HANDLER]: true as const,
    id,
    on: Object.freeze([...(on as On[number][])]),
    abilities: Object.freeze([...new Set(abilities as Ability[])]),
    // `this` stays the definition, so helpers defined beside `handle` keep working.
    async handle(event: WorkspaceEvent<On[number]>, ctx: HandlerContext): Promise<void> {
      await run.call(def, event, ctx);
    },
  });
}
