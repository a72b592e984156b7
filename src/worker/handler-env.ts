/**
 * The environment a handler sees as `ctx.env`: the process environment minus
 * Switchyard's own secrets. Handlers read their settings there (FOLLOW_UP_DAYS,
 * WON_STAGE, …); the webhook signing secrets, the API token, the dashboard
 * login and the Redis credentials are Switchyard's and never reach handler code
 * (a handler that logs `ctx.env`, or a dependency that reports it, leaks nothing).
 */

/** Secret variables src/config.ts reads: each is dropped, and so is its `_FILE` variant. */
export const SWITCHYARD_SECRETS: readonly string[] = [
  'WEBHOOK_SECRETS',
  'WORKSPACE_API_TOKEN',
  'ADMIN_USER',
  'ADMIN_PASSWORD',
  // May carry a password (redis://:password@host); so may every REDIS*/SENTINEL* variable below.
  'REDIS_URL',
];

/** Redis and Sentinel connection settings (passwords, usernames, TLS keys): Switchyard's, not a handler's. */
const REDIS_VARIABLE = /^(REDIS|SENTINEL)/;

/** Whether `name` is one of Switchyard's own secrets (or the file holding one). */
export function isSwitchyardSecret(name: string): boolean {
  const base = name.toUpperCase().replace(/_FILE$/, '');
  return SWITCHYARD_SECRETS.includes(base) || REDIS_VARIABLE.test(base);
}

/** `env` without Switchyard's own secrets, frozen. Pure: `env` itself is not changed. */
export function handlerEnv(env: Readonly<Record<string, string | undefined>>): Readonly<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!isSwitchyardSecret(name)) out[name] = value;
  }
  return Object.freeze(out);
}

/**
 * Handler code runs in the worker's own process, so `ctx.env` alone would not
 * keep the secrets from it: once the configuration has been read (config.ts is
 * their only reader), they are removed from `env` itself — `process.env` in the
 * CLI — so neither a handler, nor a dependency reporting the environment, nor a
 * child process it starts can read them. Returns the names removed.
 */
export function dropSecrets(env: Record<string, string | undefined>): string[] {
  const dropped = Object.keys(env).filter(isSwitchyardSecret);
  for (const name of dropped) Reflect.deleteProperty(env, name);
  return dropped;
}
