import type { Handler } from '../handler.js';
import { HandlerSettingsError, type SettingProblem } from '../handler/errors.js';
import { parseSettings } from '../handler/settings.js';
import { handlerEnv } from './handler-env.js';

/** Each handler's parsed settings (`ctx.settings`), by handler id. */
export type SettingsById = ReadonlyMap<string, Readonly<Record<string, unknown>>>;

const NONE: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Parses the settings of `handlers` from `env` (without Switchyard's own
 * secrets). Every problem of every handler is collected, so one start-up names
 * them all; throws HandlerSettingsError when there is any.
 */
export function readHandlerSettings(handlers: readonly Pick<Handler, 'id' | 'settings'>[], env: Readonly<Record<string, string | undefined>>): SettingsById {
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
