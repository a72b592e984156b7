import type { z } from 'zod';
import { HandlerSettingsError, type SettingProblem } from './errors.js';
import { isSwitchyardSecret } from './secrets.js';
import { handlerEnv } from './env.js';

/**
 * A handler's `settings`: a zod object schema whose keys are the environment
 * variables it reads, e.g. `z.object({ FOLLOW_UP_DAYS: z.coerce.number().positive().default(2) })`.
 */
export type SettingsSchema = z.ZodObject<z.core.$ZodShape, z.core.$ZodObjectConfig>;

/** The parsed settings a schema gives (`ctx.settings`); `{}` without a schema. */
export type SettingsOf<S> = S extends SettingsSchema ? Readonly<z.output<S>> : Readonly<Record<never, never>>;

/** What `switchyard handlers` shows of one setting. */
export interface SettingVariable {
  readonly name: string;
  /** Whether start-up stops when it is unset. */
  readonly required: boolean;
  /** The value it takes when unset (after the schema's transforms; a string default as written, see {@link stringDefault}), if any. */
  readonly default?: unknown;
  /** The schema's `.describe()` text, if any. */
  readonly description?: string;
}

const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Why `schema` cannot be a handler's settings, or null when it can. Checked by
 * shape rather than `instanceof`, so a schema made by another copy of zod works.
 */
export function settingsSchemaProblem(schema: unknown): string | null {
  const s = schema as { shape?: unknown; safeParse?: unknown } | null;
  if (typeof s !== 'object' || s === null || typeof s.safeParse !== 'function' || typeof s.shape !== 'object' || s.shape === null) {
    return '"settings" must be a zod object schema such as z.object({ FOLLOW_UP_DAYS: z.coerce.number().default(2) })';
  }
  const names = Object.keys(s.shape);
  const bad = names.find((n) => !VARIABLE.test(n));
  if (bad !== undefined)
    return `settings key ${JSON.stringify(bad)} is not an environment variable name (letters, digits and "_", not starting with a digit)`;
  const secret = names.find(isSwitchyardSecret);
  if (secret !== undefined) {
    return (
      `settings name ${secret}, one of Switchyard's own secrets; ` +
      'secrets never reach handlers: give the handler a variable of its own (e.g. MY_CRM_TOKEN)'
    );
  }
  return null;
}

/** The variables a settings schema reads. */
export function settingVariables(schema: SettingsSchema): SettingVariable[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const f = field as z.ZodType;
    const unset = f.safeParse(undefined);
    return {
      name,
      required: !unset.success,
      ...(unset.success && unset.data !== undefined ? { default: unset.data } : {}),
      ...(f.description ? { description: f.description } : {}),
    };
  });
}

/**
 * The text a setting's default stands for, when the schema's value for an
 * unset variable is a non-blank string: that default is read as the
 * environment value would be. Zod hands a `.default()` back as written,
 * without running the schema, so `businessHoursSetting().default('Mon-Fri
 * 09:00-17:00 Europe/Berlin')` would otherwise give the handler the text
 * instead of business hours (listed as valid, then failing every run). A
 * plain `z.string().default('x')` parses to the same string either way.
 */
export function stringDefault(field: z.ZodType): string | undefined {
  const unset = field.safeParse(undefined);
  return unset.success && typeof unset.data === 'string' && unset.data.trim() !== '' ? unset.data : undefined;
}

/**
 * The input of a settings parse: each variable's value from `valueOf` when
 * it has one (an empty or blank string counts as unset), else its string
 * default ({@link stringDefault}); `fromDefault` names the variables given so.
 */
export function settingsInput(
  schema: SettingsSchema,
  valueOf: (name: string) => unknown,
): { input: Record<string, unknown>; fromDefault: Set<string> } {
  const input: Record<string, unknown> = {};
  const fromDefault = new Set<string>();
  for (const [name, field] of Object.entries(schema.shape)) {
    const value = valueOf(name);
    if (value !== undefined && !(typeof value === 'string' && value.trim() === '')) {
      input[name] = value;
      continue;
    }
    const text = stringDefault(field as z.ZodType);
    if (text === undefined) continue;
    input[name] = text;
    fromDefault.add(name);
  }
  return { input, fromDefault };
}

/**
 * Parses a handler's settings from `env`. Only the schema's own variables are
 * read; an empty (or blank) value counts as unset, as for Switchyard's own
 * configuration, and a string default is parsed as if the environment held it.
 * Throws HandlerSettingsError naming the handler, each variable and what is
 * expected — never the value, which may be a credential of the handler's own.
 */
export function parseSettings<S extends SettingsSchema>(
  handlerId: string,
  schema: S,
  env: Readonly<Record<string, string | undefined>>,
): Readonly<z.output<S>> {
  const { input, fromDefault } = settingsInput(schema, (name) => env[name]);
  const parsed = schema.safeParse(input);
  if (parsed.success) return Object.freeze(parsed.data);
  throw new HandlerSettingsError(settingProblems(handlerId, parsed.error.issues, input, fromDefault));
}

/** Each variable's problems in a failed settings parse, by what is expected (never the value). */
export function settingProblems(
  handlerId: string,
  issues: readonly z.core.$ZodIssue[],
  input: Readonly<Record<string, unknown>>,
  fromDefault: ReadonlySet<string> = new Set(),
): SettingProblem[] {
  const byVariable = new Map<string, string[]>();
  for (const issue of issues) {
    const variable = issue.path.length > 0 ? String(issue.path[0]) : '';
    byVariable.set(variable, [...(byVariable.get(variable) ?? []), expectation(issue)]);
  }
  return [...byVariable].map(([variable, expected]) => {
    const why = [...new Set(expected)].join(', ');
    const problem =
      variable === ''
        ? `settings are invalid: ${why}`
        : fromDefault.has(variable)
          ? `${variable} is not set and its default is invalid: ${why}`
          : input[variable] === undefined
            ? `${variable} is not set: ${why}`
            : `${variable} is invalid: ${why}`;
    return { handlerId, variable, problem };
  });
}

/**
 * Zod's message as what is expected: "Invalid input: expected number,
 * received NaN" → "expected number"; a schema's own message stays as written.
 */
function expectation(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_format' && /^Invalid \w+$/.test(issue.message)) return `expected a valid ${issue.format}`;
  const text = issue.message
    .replace(/^(Invalid (input|option|string|value|type)|Too (small|big)):\s*/, '')
    .replace(/,\s*received \w+$/, '');
  return /^[A-Z][a-z]/.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text;
}

/** Each handler's parsed settings (`ctx.settings`), by handler id. */
export type SettingsById = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

const NONE: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Parses the settings of `handlers` from `env` (without Switchyard's own
 * secrets). Every problem of every handler is collected, so one start-up names
 * them all; throws HandlerSettingsError when there is any.
 */
export function readHandlerSettings(
  handlers: readonly { readonly id: string; readonly settings: SettingsSchema | null }[],
  env: Readonly<Record<string, string | undefined>>,
): SettingsById {
  const visible = handlerEnv(env);
  const out = new Map<string, Readonly<Record<string, unknown>>>();
  const problems: SettingProblem[] = [];
  for (const h of handlers) {
    if (!h.settings) {
      out.set(h.id, NONE);
      continue;
    }
    try {
      out.set(h.id, parseSettings(h.id, h.settings, visible));
    } catch (err) {
      if (!(err instanceof HandlerSettingsError)) throw err;
      problems.push(...err.problems);
    }
  }
  if (problems.length > 0) throw new HandlerSettingsError(problems);
  return out;
}
