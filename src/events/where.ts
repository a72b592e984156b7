import { closest } from '../util/index.js';
import { EVENT_NAMES, type EventName } from './catalogue.js';
import { eventFields } from './fields.js';

/*
 * Content filters over event bodies: `--where <path><op><value>` of `deliveries` and `rerun`, and the query box
 * of /admin/deliveries. Pure: parsing checks each path against the catalogue (src/events/catalogue.ts), matching
 * reads a parsed event's `data`. How the bodies are found and read is the caller's (src/history).
 *
 *   path   `data.` then the field's dotted path as `switchyard events` lists it (`data.contact_id`,
 *          `data.channel.type`); an array's items by `[]` or plainly (`data.items[].sku`, `data.items.sku`)
 *   op     `=` equals (as text, or as a number when both sides are numbers: `38` matches 38 and "38.0"),
 *          `!=` the field is there (null counts) and equals no value it holds, `~` contains, ignoring case
 *   value  the rest of the expression, as is; in double quotes it is compared as text only
 */

/** The operators, in the order a condition is split on. */
export const WHERE_OPS = ['!=', '~', '='] as const;
export type WhereOp = (typeof WHERE_OPS)[number];

/** One parsed condition. */
export interface WhereCondition {
  /** As given, e.g. `data.body~refund`. */
  readonly text: string;
  /** The path as given (`data.items[].sku`). */
  readonly path: string;
  /** The keys below `data` (`['items', 'sku']`). */
  readonly keys: readonly string[];
  readonly op: WhereOp;
  readonly value: string;
  /** The value was in double quotes: compared as text only. */
  readonly quoted: boolean;
}

/** Every condition of a query (all must hold), and the events whose data has every path. */
export interface WhereQuery {
  readonly conditions: readonly WhereCondition[];
  /** Only deliveries of these events can match (the catalogue's events with each path, or the one `--event` named). */
  readonly events: readonly EventName[];
}

/** A condition that cannot be parsed, or names a path no event of the catalogue has. */
export class WhereError extends Error {
  readonly code = 'invalid_where';
  constructor(
    readonly expression: string,
    problem: string,
  ) {
    super(`--where "${expression}": ${problem}`);
    this.name = 'WhereError';
  }
}

const FORM = 'expected <path><op><value> with op = (equals), != (differs) or ~ (contains), e.g. data.conversation_id=38';

/** `items[].sku` → `items.sku`: paths compared without their array marks. */
const plain = (path: string): string => path.replace(/\[\]/g, '');

/** The catalogue's fields of each event by plain path: their types. */
let catalogue: Map<EventName, Map<string, string>> | undefined;
function fieldsOf(name: EventName): Map<string, string> {
  catalogue ??= new Map(EVENT_NAMES.map((n) => [n, new Map(eventFields(n).map((f) => [plain(f.path), f.type]))]));
  return catalogue.get(name) as Map<string, string>;
}

/** Splits `text` at its operator: the first `!=`, `~` or `=` after the path. */
function split(text: string): { path: string; op: WhereOp; value: string } {
  const m = /^([^=!~]*)(!=|~|=)(.*)$/s.exec(text);
  if (!m) throw new WhereError(text, `no operator; ${FORM}`);
  const path = (m[1] as string).trim();
  if (path === '') throw new WhereError(text, `no path before ${m[2]}; ${FORM}`);
  return { path, op: m[2] as WhereOp, value: m[3] as string };
}

/** The keys of a path below `data`, or a WhereError saying what is wrong with its form. */
function keysOf(text: string, path: string): string[] {
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\[\])?(\.[A-Za-z_][A-Za-z0-9_]*(\[\])?)*$/.test(path)) {
    throw new WhereError(text, `"${path}" is not a field path: expected names joined by dots, e.g. data.channel.type or data.items[].sku`);
  }
  const keys = plain(path).split('.');
  if (keys[0] !== 'data' || keys.length < 2) {
    const hint = keys[0] === 'data' ? '' : `; did you mean "data.${path}"?`;
    throw new WhereError(text, `"${path}" is not under data: paths start with data., the event's fields${hint}`);
  }
  return keys.slice(1);
}

/** A did-you-mean among the paths of `events`: the nearest by spelling, else one ending in the same field name. */
function suggestPath(field: string, events: readonly EventName[]): string | null {
  const all = [...new Set(events.flatMap((e) => [...fieldsOf(e).keys()]))];
  const near = closest(field, all);
  if (near) return `data.${near}`;
  const last = field.slice(field.lastIndexOf('.') + 1).toLowerCase();
  const same = all.filter((p) => p.slice(p.lastIndexOf('.') + 1).toLowerCase() === last);
  return same.length > 0 ? same.map((p) => `data.${p}`).join(' or ') : null;
}

/** The events (of `scope`) whose data has `field`, or a WhereError with a did-you-mean. */
function eventsWith(text: string, path: string, field: string, scope: readonly EventName[], event?: EventName): EventName[] {
  const found = scope.filter((e) => fieldsOf(e).has(field));
  if (found.length > 0) return found;
  const hint = suggestPath(field, scope);
  const where = event ? `${event} has no field "${path}"` : `no event of the catalogue has a field "${path}"`;
  const list = event ? `\`switchyard events ${event}\`` : '`switchyard events`';
  throw new WhereError(text, `${where}${hint ? `; did you mean ${hint}?` : ''} (${list} lists the fields)`);
}

/** Refuses a value the field can never hold: `=` on an object, a word for a number, an enum's unknown member. */
function checkValue(c: WhereCondition, field: string, events: readonly EventName[]): void {
  const types = [...new Set(events.flatMap((e) => (fieldsOf(e).get(field) as string).split(' | ')))].filter((t) => t !== 'null');
  if (c.op === '~' || (c.value === 'null' && !c.quoted)) return;
  if (types.some((t) => t.startsWith('object'))) {
    const inner = [...new Set(events.flatMap((e) => [...fieldsOf(e).keys()].filter((k) => k.startsWith(`${field}.`))))];
    const some = inner.slice(0, 3).map((k) => `data.${k}`);
    throw new WhereError(c.text, `${c.path} is an object: compare one of its fields (${some.join(', ')}) or use ~ to search inside it`);
  }
  if (types.every((t) => t === 'int' || t === 'number') && !c.quoted && !isNumber(c.value)) {
    throw new WhereError(c.text, `${c.path} is a number: expected a number after ${c.op}, got "${c.value}"`);
  }
  const members = types.every((t) => /^".*"$/.test(t)) ? types.map((t) => JSON.parse(t) as string) : null;
  if (members && !members.includes(c.value)) {
    const near = closest(c.value, members);
    throw new WhereError(
      c.text,
      `${c.path} is one of ${members.join(', ')}${c.value === '' ? '' : `, not "${c.value}"`}${near ? `; did you mean ${near}?` : ''}`,
    );
  }
}

const isNumber = (s: string): boolean => s.trim() !== '' && Number.isFinite(Number(s));

/**
 * Parses one `--where` expression; its path must be a field of `event` (given) or of some event of the catalogue.
 * Throws {@link WhereError} saying what is wrong and what is expected.
 */
export function parseWhere(text: string, event?: EventName): WhereCondition & { readonly events: readonly EventName[] } {
  const { path, op, value: rawValue } = split(text);
  const keys = keysOf(text, path);
  if (op === '=' && rawValue.startsWith('=')) throw new WhereError(text, `"==": equals is one =, e.g. ${path}=${rawValue.slice(1)}`);
  const quoted = rawValue.length >= 2 && rawValue.startsWith('"') && rawValue.endsWith('"');
  const value = quoted ? rawValue.slice(1, -1) : rawValue;
  if (op === '~' && value === '') throw new WhereError(text, 'nothing after ~: expected the text to look for');
  const field = keys.join('.');
  const events = eventsWith(text, path, field, event ? [event] : EVENT_NAMES, event);
  const c: WhereCondition = { text, path, keys, op, value, quoted };
  checkValue(c, field, events);
  return { ...c, events };
}

/** Parses every expression (all must hold): the conditions, and the events whose data has all their paths. */
export function parseWheres(texts: readonly string[], event?: EventName): WhereQuery {
  let events: readonly EventName[] = event ? [event] : EVENT_NAMES;
  const conditions = texts.map((t) => {
    const { events: own, ...c } = parseWhere(t, event);
    events = events.filter((e) => own.includes(e));
    return c;
  });
  if (conditions.length > 1 && events.length === 0) {
    throw new WhereError(texts.join(' '), 'no event of the catalogue has all these fields, so nothing can match every condition');
  }
  return { conditions, events };
}

/** The values at `keys` below `v`, through arrays (each item), undefined where a key is missing. */
function valuesAt(v: unknown, keys: readonly string[], i: number, out: unknown[]): void {
  if (Array.isArray(v) && i < keys.length) {
    for (const item of v) valuesAt(item, keys, i, out);
    return;
  }
  if (i === keys.length) {
    out.push(v);
    return;
  }
  if (typeof v !== 'object' || v === null) return;
  const next = (v as Record<string, unknown>)[keys[i] as string];
  if (next !== undefined) valuesAt(next, keys, i + 1, out);
}

function equals(v: unknown, c: WhereCondition): boolean {
  if (v === null) return !c.quoted && c.value === 'null';
  if (typeof v === 'string') return v === c.value || (!c.quoted && isNumber(v) && isNumber(c.value) && Number(v) === Number(c.value));
  if (typeof v === 'number') return !c.quoted && isNumber(c.value) && v === Number(c.value);
  if (typeof v === 'boolean') return String(v) === c.value;
  return false;
}

/** True when `v`, or any value inside it, contains `needle` (lower case). */
function contains(v: unknown, needle: string): boolean {
  if (typeof v === 'object' && v !== null) return Object.values(v).some((x) => contains(x, needle));
  if (typeof v === 'string') return v.toLowerCase().includes(needle);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v).toLowerCase().includes(needle);
  return false;
}

/** True when the event's `data` satisfies the condition. */
export function matchesCondition(data: unknown, c: WhereCondition): boolean {
  const found: unknown[] = [];
  valuesAt(data, c.keys, 0, found);
  switch (c.op) {
    case '=':
      return found.some((v) => equals(v, c));
    case '!=':
      return found.length > 0 && !found.some((v) => equals(v, c));
    case '~': {
      const needle = c.value.toLowerCase();
      return found.some((v) => contains(v, needle));
    }
  }
}

/** True when the event (its name and `data`) satisfies every condition of the query. */
export function matchesWhere(q: WhereQuery, name: string | null, data: unknown): boolean {
  if (name === null || !(q.events as readonly string[]).includes(name)) return false;
  return q.conditions.every((c) => matchesCondition(data, c));
}
