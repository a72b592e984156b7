/**
 * The environment handler code may read: the process environment minus
 * Switchyard's own secrets (see handler/secrets.ts). Handler settings are
 * parsed from it; the webhook signing secrets, the API token, the dashboard
 * login and the Redis credentials never reach handler code.
 */
import { declareSecretVariables, isSwitchyardSecret } from './secrets.js';

export { SWITCHYARD_SECRETS, isSwitchyardSecret } from './secrets.js';

/** `env` without Switchyard's own secrets, frozen. Pure: `env` itself is not changed. */
export function handlerEnv(env: Readonly<Record<string, string | undefined>>): Readonly<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!isSwitchyardSecret(name)) out[name] = value;
  }
  return Object.freeze(out);
}

/**
 * Handler code runs in the worker's own process, so keeping the secrets out of
 * its settings alone would not keep them from it: once the configuration has
 * been read (config/config.ts is their only reader), they are removed from `env`
 * itself — `process.env` in the CLI — so neither a handler, nor a dependency
 * reporting the environment, nor a child process it starts can read them.
 * `also`: the variables the configuration named as secrets (`secretVariables(config)`, src/config), dropped too
 * and kept out of every later {@link handlerEnv}. Returns the names removed.
 */
export function dropSecrets(env: Record<string, string | undefined>, also: readonly string[] = []): string[] {
  // The configuration's own secret variables (a workspace's tokenEnv: `secretVariables(config)`) count from now on.
  declareSecretVariables(also);
  const dropped = Object.keys(env).filter(isSwitchyardSecret);
  for (const name of dropped) Reflect.deleteProperty(env, name);
  return dropped;
}
