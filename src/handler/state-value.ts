import { HandlerConfigError } from './errors.js';

/**
 * What `ctx.state` accepts: plain JSON, checked before anything is written,
 * the same in the worker (src/worker/durable.ts) and in the virtual workflow of
 * testHandler and `replay --inline` (src/worker/virtual-state.ts). A value
 * that would not come back from a JSON round trip as it was given (a Map or a
 * Set stored as `{}`, a Date as a string, NaN as null, a BigInt or a cycle
 * that JSON.stringify throws on) is refused, naming the state and the path in
 * the value; with a `state.schema`, the value must also satisfy it. A
 * property holding `undefined` is fine: it is left out, as if absent.
 */

/** A zod schema of a handler's state (`state: { key, schema }`): what `ctx.state` is typed as, and what a write must satisfy. */
export interface StateSchema<T = unknown> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: readonly StateIssue[] } };
  /** zod's output type (type-level only). */
  readonly _output?: T;
}

/** The part of a zod issue a refusal names. */
export interface StateIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

const TAIL = 'store plain JSON (objects, arrays, strings, finite numbers, booleans, null)';

const at = (path: string, key: PropertyKey): string =>
  typeof key === 'number'
    ? `${path}[${key}]`
    : /^[A-Za-z_$][\w$]*$/.test(String(key))
      ? `${path}.${String(key)}`
      : `${path}[${JSON.stringify(String(key))}]`;

function kindOf(value: object): string | null {
  if (Array.isArray(value)) return null;
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto === null || proto === Object.prototype) return null;
  if (value instanceof Map) return 'a Map';
  if (value instanceof Set) return 'a Set';
  if (value instanceof Date) return 'a Date (it would come back as a string; store its toISOString())';
  const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
  return `${typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a prototype'} (not a plain object)`;
}

/** Why `value` does not survive a JSON round trip (`value.byContact is a Map`), or null when it does. */
export function jsonProblem(value: unknown, path = 'value', within: Set<object> = new Set()): string | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(value) ? null : `${path} is ${value} (it would come back as null)`;
    case 'bigint':
      return `${path} is a BigInt (${value}n), which JSON cannot hold; store it as a string`;
    case 'undefined':
      return `${path} is undefined${path === 'value' ? ' (set null to clear the state)' : ''}`;
    case 'function':
      return `${path} is a function`;
    case 'symbol':
      return `${path} is a symbol`;
    default:
  }
  if (value === null) return null;
  const obj = value as object;
  if (within.has(obj)) return `${path} refers back to an object that contains it (a circular structure)`;
  const kind = kindOf(obj);
  if (kind !== null) return `${path} is ${kind}`;
  within.add(obj);
  try {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        const p = jsonProblem(obj[i], at(path, i), within);
        if (p !== null) return p;
      }
      return null;
    }
    for (const [k, v] of Object.entries(obj)) {
      if (v === undefined) continue;
      const p = jsonProblem(v, at(path, k), within);
      if (p !== null) return p;
    }
    return null;
  } finally {
    within.delete(obj);
  }
}

/** The label of one state write in messages: `ctx.state.set() in handler "nurture" (state contact:7)`. */
export const stateLabel = (op: 'set' | 'update', handlerId: string, key: string): string =>
  `ctx.state.${op}() in handler "${handlerId}" (state ${key})`;

/** Throws the HandlerConfigError for a value `ctx.state` cannot keep (not plain JSON, or not what `schema` allows). */
export function checkStateValue(label: string, value: unknown, schema: StateSchema | null): void {
  const problem = jsonProblem(value);
  if (problem !== null) throw new HandlerConfigError(`${label}: ${problem}; ${TAIL}`);
  if (schema === null) return;
  const parsed = schema.safeParse(value);
  if (parsed.success) return;
  const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.reduce<string>((p, k) => at(p, k), 'value')}: ${i.message}`);
  throw new HandlerConfigError(`${label}: the value does not match the handler's state.schema (${issues.join('; ')})`);
}
