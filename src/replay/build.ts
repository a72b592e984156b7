import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  isEventName,
  suggestEventName,
  validateEvent,
  type EventName,
  type ValidationResult,
  parseEnvelope,
  Fixture,
  fixtureBytes,
} from '../events/index.js';
import { freshId } from './filter.js';

/** A bad `send` request (unknown event, bad --set); the CLI maps it to exit 2. */
export class BuildError extends Error {
  readonly code = 'send_build';
  constructor(message: string) {
    super(message);
    this.name = 'BuildError';
  }
}

/** `fixtures/` of the package: two levels up from src/replay and from dist/replay alike. */
export const FIXTURES_DIR = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/** The envelope of the shipped fixture for `name`: realistic defaults for every field. */
export function defaultEnvelope(name: EventName, dir = FIXTURES_DIR): Record<string, unknown> {
  const fixture = Fixture.parse(JSON.parse(readFileSync(`${dir}${name}.json`, 'utf8')));
  return JSON.parse(fixtureBytes(fixture).toString('utf8')) as Record<string, unknown>;
}

/** `--set` value: JSON when it parses (`42`, `true`, `null`, `"42"`, `{...}`), else the text itself. */
export function parseSetValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const ENVELOPE_KEYS = new Set(['id', 'event', 'created_at', 'data']);
/** Path segments that reach an object's prototype rather than a field. */
const UNSAFE_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * Applies `path=value` to the envelope. Paths are dotted and rooted at the
 * envelope (`data.contact_id`, `created_at`); a path whose first segment is not
 * an envelope field is taken inside `data` (`contact_id` = `data.contact_id`).
 * Numeric segments index arrays. Missing objects on the way are created.
 */
export function applySet(envelope: Record<string, unknown>, assignment: string): void {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new BuildError(`--set "${assignment}": expected path=value, e.g. --set data.contact_id=36`);
  const path = assignment.slice(0, eq).trim().split('.');
  if (path.some((p) => p === '')) throw new BuildError(`--set "${assignment}": empty segment in the path`);
  const unsafe = path.find((p) => UNSAFE_SEGMENTS.has(p));
  // Assigning through them would change the prototype of every object instead of a field of the delivery.
  if (unsafe) {
    throw new BuildError(
      `--set "${assignment}": "${unsafe}" cannot be set (it reaches an object's prototype or constructor, not a field of the delivery); ` +
        'name a field of the envelope or of data',
    );
  }
  if (!ENVELOPE_KEYS.has(path[0] as string)) path.unshift('data');
  let node: Record<string, unknown> | unknown[] = envelope;
  for (let i = 0; i < path.length - 1; i++) {
    const seg = path[i] as string;
    const cur: unknown = Array.isArray(node) ? node[Number(seg)] : node[seg];
    if (typeof cur === 'object' && cur !== null) {
      node = cur as Record<string, unknown>;
      continue;
    }
    const created: Record<string, unknown> = {};
    if (Array.isArray(node)) node[Number(seg)] = created;
    else node[seg] = created;
    node = created;
  }
  const last = path[path.length - 1] as string;
  const value = parseSetValue(assignment.slice(eq + 1));
  if (Array.isArray(node)) node[Number(last)] = value;
  else node[last] = value;
}

export interface BuildOptions {
  /** Replaces `data` wholesale before the --set overrides (the parsed --data file). */
  data?: unknown;
  sets?: readonly string[];
  id?: string;
  now?: () => Date;
  fixturesDir?: string;
}

export interface BuiltDelivery {
  readonly name: EventName;
  readonly bytes: Buffer;
  readonly key: string;
  /** The catalogue's verdict; `send` refuses an invalid delivery unless asked to send it anyway. */
  readonly validation: ValidationResult;
}

/**
 * Builds a realistic delivery for `name`: the shipped fixture's envelope with
 * a fresh id and `created_at` now, then `data` from --data, then each --set.
 */
export function buildDelivery(name: string, opts: BuildOptions = {}): BuiltDelivery {
  if (!isEventName(name)) {
    const hint = suggestEventName(name);
    throw new BuildError(`unknown event "${name}"${hint ? `; did you mean "${hint}"?` : ''} (\`switchyard events\` lists them)`);
  }
  const envelope = defaultEnvelope(name, opts.fixturesDir);
  envelope['id'] = opts.id ?? freshId();
  envelope['created_at'] = (opts.now ?? (() => new Date()))().toISOString();
  if (opts.data !== undefined) envelope['data'] = opts.data;
  for (const s of opts.sets ?? []) applySet(envelope, s);
  const bytes = Buffer.from(JSON.stringify(envelope), 'utf8');
  const parsed = parseEnvelope(bytes);
  return { name, bytes, key: parsed.key, validation: validateEvent(parsed) };
}
