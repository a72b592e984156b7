import { z } from 'zod';
import { EVENT_SCHEMAS, type EventName } from './catalogue.js';

/** One field of an event's `data`, as `switchyard events` lists it. */
export interface EventField {
  /** Dotted path inside `data`, e.g. `channel.type`; array items as `items[]`. */
  readonly path: string;
  /** Readable type: `int`, `string`, `boolean`, `"open" | "closed"`, `object`, `int[]`, with `| null` when nullable. */
  readonly type: string;
  /** True when the field may be absent. */
  readonly optional: boolean;
}

/** The subset of JSON Schema that `z.toJSONSchema` emits for the resource schemas. */
interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  const?: unknown;
}

const TYPE_NAMES: Record<string, string> = { integer: 'int' };

function typeOf(s: JsonSchema): string {
  if (s.anyOf) return s.anyOf.map(typeOf).join(' | ');
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? ['unknown'] : [s.type];
  return types.map((t) => (t === 'array' ? `${s.items ? typeOf(s.items) : 'unknown'}[]` : (TYPE_NAMES[t] ?? t))).join(' | ');
}

/** The object schema inside a field (through nullable unions and arrays), if any. */
function objectWithin(s: JsonSchema): { schema: JsonSchema; suffix: string } | null {
  if (s.properties) return { schema: s, suffix: '' };
  if (s.items) {
    const inner = objectWithin(s.items);
    return inner && { schema: inner.schema, suffix: '[]' + inner.suffix };
  }
  for (const alt of s.anyOf ?? []) {
    const inner = objectWithin(alt);
    if (inner) return inner;
  }
  return null;
}

function walk(s: JsonSchema, prefix: string, out: EventField[]): void {
  const required = new Set(s.required ?? []);
  for (const [key, field] of Object.entries(s.properties ?? {})) {
    const path = prefix + key;
    out.push({ path, type: typeOf(field), optional: !required.has(key) });
    const inner = objectWithin(field);
    if (inner) walk(inner.schema, `${path}${inner.suffix}.`, out);
  }
}

const cache = new Map<EventName, readonly EventField[]>();

/**
 * The fields of an event's `data`, derived from its zod schema (through zod's
 * JSON Schema output) so the listing can never drift from what validation
 * accepts. Nested objects are listed too, by dotted path.
 */
export function eventFields(name: EventName): readonly EventField[] {
  let fields = cache.get(name);
  if (!fields) {
    const schema = z.toJSONSchema(EVENT_SCHEMAS[name], { io: 'output', unrepresentable: 'any' }) as JsonSchema;
    const out: EventField[] = [];
    walk(schema, '', out);
    fields = Object.freeze(out.map((f) => Object.freeze(f)));
    cache.set(name, fields);
  }
  return fields;
}
