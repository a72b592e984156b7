import type { z } from 'zod';
import { HandlerConfigError } from '../worker/classify.js';

/**
 * Reads a handler's settings from `ctx.env` with a zod schema; a bad value is
 * a HandlerConfigError (dead-lettered with the reason, never retried blindly).
 */
export function readSettings<S extends z.ZodType>(handlerId: string, schema: S, env: Readonly<Record<string, string | undefined>>): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${String(i.path[0] ?? '?')}: ${i.message}`).join('; ');
  throw new HandlerConfigError(`${handlerId} settings: ${problems}`);
}
