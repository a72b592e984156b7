/**
 * Switchyard's own secrets: the webhook signing secrets, the API token, the
 * dashboard login, the Redis credentials and the tracing collector's headers. They are Switchyard's and never
 * reach handler code: they are removed from the environment of any process
 * that loads handler modules, and a handler's `settings` may not name them.
 */

/** Secret variables src/config/config.ts reads: each is a secret, and so is its `_FILE` variant. */
export const SWITCHYARD_SECRETS: readonly string[] = [
  'WEBHOOK_SECRETS',
  'WORKSPACE_API_TOKEN',
  'ADMIN_USER',
  'ADMIN_PASSWORD',
  // May carry a password (redis://:password@host); so may every REDIS*/SENTINEL* variable below.
  'REDIS_URL',
  // The tracing collector's headers (often its API key); src/config/config.ts hands them to the exporter.
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  // WORKSPACES_FILE (its `_FILE` form): the file holds every workspace's token and webhook secrets.
  'WORKSPACES',
];

/** Redis and Sentinel connection settings (passwords, usernames, TLS keys): Switchyard's, not a handler's. */
const REDIS_VARIABLE = /^(REDIS|SENTINEL)/;

/**
 * Variables the configuration named as holding a secret (a workspace's `tokenEnv` in WORKSPACES_FILE): secrets of
 * this process from the moment they are declared ({@link declareSecretVariables}), as the fixed ones are.
 */
const declared = new Set<string>();

/** Marks `names` as Switchyard's secrets for the rest of the process (never undone). */
export function declareSecretVariables(names: readonly string[]): void {
  for (const n of names) declared.add(n.toUpperCase());
}

/** Whether `name` is one of Switchyard's own secrets (or the file holding one). */
export function isSwitchyardSecret(name: string): boolean {
  const base = name.toUpperCase().replace(/_FILE$/, '');
  return SWITCHYARD_SECRETS.includes(base) || REDIS_VARIABLE.test(base) || declared.has(name.toUpperCase());
}
