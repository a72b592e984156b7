import type { z } from 'zod';
import { type Handler, HandlerSettingsError, settingProblems, settingsInput, handlerEnv, readHandlerSettings } from '../handler/index.js';

type Primitive = string | number | boolean | bigint | null | undefined;

/**
 * Settings given to testHandler (testSchedule) directly: each key one of the handler's (schedule's)
 * settings, with the value `ctx.settings` has (a number, a boolean, a string),
 * or the text the environment would hold. A setting whose value is an object
 * (`businessHoursSetting()`) is given as that text.
 */
export type SettingsInput<Settings> = {
  readonly [K in keyof Settings]?: (Settings[K] extends Primitive ? Settings[K] : never) | string | undefined;
};

/** A value as given, or its text when only the text passes its schema (`true` for `z.stringbool()`). */
function asInput(field: z.ZodType, value: unknown): unknown {
  if ((typeof value !== 'number' && typeof value !== 'boolean') || field.safeParse(value).success) return value;
  return field.safeParse(String(value)).success ? String(value) : value;
}

/**
 * `ctx.settings` of one test run: parsed from `env` as when handler modules
 * load (an empty value is unset, a string default is read like an environment
 * value; Switchyard's own secrets are not visible),
 * with `given` values in place of the environment's, the whole checked by the
 * handler's schema. Throws HandlerSettingsError naming each bad variable, and
 * a TypeError for a key the handler has no setting of.
 */
export function testSettings(
  handler: Pick<Handler, 'id' | 'settings'>,
  given: Readonly<Record<string, unknown>> | undefined,
  env: Readonly<Record<string, string | undefined>>,
  caller: 'testHandler' | 'testSchedule' = 'testHandler',
): Readonly<Record<string, unknown>> {
  const schema = handler.settings;
  const names = schema ? Object.keys(schema.shape) : [];
  const unknown = Object.keys(given ?? {}).filter((k) => !names.includes(k));
  if (unknown.length > 0) {
    const kind = caller === 'testHandler' ? 'handler' : 'schedule';
    const given = unknown.map((k) => JSON.stringify(k)).join(', ');
    const expected = names.length ? `one of ${names.join(', ')}` : 'none: it has no settings schema';
    throw new TypeError(`${caller}: ${kind} "${handler.id}" has no setting ${given} (expected ${expected})`);
  }
  if (!schema || given === undefined) return readHandlerSettings([handler], env).get(handler.id) ?? {};
  const visible = handlerEnv(env);
  const { input, fromDefault } = settingsInput(schema, (name) =>
    Object.hasOwn(given, name) ? asInput(schema.shape[name] as z.ZodType, given[name]) : visible[name],
  );
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new HandlerSettingsError(settingProblems(handler.id, parsed.error.issues, input, fromDefault));
  return Object.freeze(parsed.data);
}
