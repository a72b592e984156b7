import { ABILITIES, type Ability } from '../spec/index.js';
import { closest } from '../util/index.js';
import { retryPolicy, timeoutMs, type RetryPolicy } from './options.js';
import { settingsSchemaProblem } from './settings.js';

const ABILITY_SET: ReadonlySet<string> = new Set(ABILITIES);

/**
 * The options a handler and a schedule share, validated the same way:
 * abilities, settings, retry and timeout. `fail` throws the definition error
 * naming the handler or schedule.
 */
export function commonOptions(
  o: { abilities: unknown; settings: unknown; retry: unknown; timeout: unknown },
  fail: (msg: string) => never,
): { abilities: Ability[]; retry: RetryPolicy; timeoutMs: number | null } {
  if (!Array.isArray(o.abilities)) fail('"abilities" must be an array of ability names');
  for (const ability of o.abilities as unknown[]) {
    if (typeof ability !== 'string' || !ABILITY_SET.has(ability)) {
      const hint = typeof ability === 'string' ? closest(ability, ABILITIES) : null;
      fail(
        `unknown ability ${JSON.stringify(ability)}` + (hint ? `; did you mean "${hint}"?` : `; known abilities: ${ABILITIES.join(', ')}`),
      );
    }
  }
  const settingsProblem = o.settings === undefined ? null : settingsSchemaProblem(o.settings);
  if (settingsProblem !== null) fail(settingsProblem);
  return { abilities: [...new Set(o.abilities as Ability[])], retry: retryPolicy(o.retry, fail), timeoutMs: timeoutMs(o.timeout, fail) };
}
