import { closest, printable } from '../util/index.js';

/**
 * Many workspaces in one deployment (WORKSPACES_FILE). A deployment of one keeps
 * today's variables and is the workspace {@link DEFAULT_WORKSPACE}; a deployment of
 * many names each workspace in a JSON file, and every part of Switchyard that holds
 * a record-keyed thing (dedupe, change claims, order lines, bursts, waits, state,
 * snapshots, history, the limiter, the queues) works on one workspace's
 * {@link workspaceConfig}: the same Config with that workspace's prefix, API URL,
 * token, burst, secrets and webhook path.
 */

/** One workspace of a deployment, as read from WORKSPACES_FILE (its token resolved). */
export interface WorkspaceSpec {
  /** Used in URLs (`POST /webhooks/<id>`) and Redis keys: lower-case letters, digits and dashes. */
  readonly id: string;
  readonly apiUrl: string;
  /** Never logged: the token itself, read from `token`, `tokenEnv` or `tokenFile`. */
  readonly token: string;
  /** Webhook signing secrets, the current one first. Never logged. */
  readonly secrets: readonly string[];
  /** API requests per 10 s of its token (default WORKSPACE_API_BURST). */
  readonly burst: number;
  /** Its share of the workers' slots when workspaces compete (default 1). */
  readonly weight: number;
  /** The variable the token was read from (`tokenEnv`): a secret, kept from handler code like WORKSPACE_API_TOKEN. */
  readonly tokenEnv?: string;
}

/**
 * The environment variables of this configuration that hold a secret besides Switchyard's fixed ones (handler/secrets.ts):
 * the `tokenEnv` of each workspace. Whoever loads handler modules drops them with the others (`dropSecrets`).
 */
export function secretVariables(config: Pick<WorkspaceFields, 'workspaces'>): string[] {
  return (config.workspaces ?? []).flatMap((w) => (w.tokenEnv === undefined ? [] : [w.tokenEnv]));
}

/** The workspace of a deployment of one (no WORKSPACES_FILE). */
export const DEFAULT_WORKSPACE = 'default';

/** What an id must look like (it is part of URLs and Redis keys). */
export const WORKSPACE_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;

/**
 * The Redis prefix of one workspace's keys: `{<base>:<id>}` (the base without its
 * braces). Hash-tagged, so every key one script of that workspace touches shares a
 * Cluster slot, and different workspaces spread over the cluster.
 */
export function workspacePrefix(base: string, id: string): string {
  return `{${base.replace(/[{}]/g, '')}:${id}}`;
}

/** The part of a Config a workspace replaces (see {@link workspaceConfig}). */
export interface WorkspaceFields {
  /** The workspace this Config serves: {@link DEFAULT_WORKSPACE} in a deployment of one. */
  readonly workspaceId: string;
  /** Its share of the workers' slots when workspaces compete (1 in a deployment of one). */
  readonly workspaceWeight: number;
  /** Every workspace of a deployment of many (WORKSPACES_FILE); undefined in a deployment of one. */
  readonly workspaces: readonly WorkspaceSpec[] | undefined;
  /** Where they were read from (named in messages). */
  readonly workspacesFile: string | undefined;
}

interface Derivable extends WorkspaceFields {
  readonly queuePrefix: string;
  readonly webhookPath: string;
  readonly webhookSecrets: readonly string[];
  readonly workspaceApiUrl: string | undefined;
  readonly workspaceApiToken: string | undefined;
  readonly workspaceApiBurst: number;
  readonly spoolDir: string | undefined;
}

/**
 * The Config of one workspace of a deployment of many: its prefix
 * ({@link workspacePrefix}), API URL, token, burst, secrets, weight, its webhook
 * path (`<WEBHOOK_PATH>/<id>`) and its spool directory (`<SPOOL_DIR>/<id>`).
 * `workspaces` is kept, so the result still knows the deployment.
 */
export function workspaceConfig<C extends Derivable>(config: C, ws: WorkspaceSpec): C {
  // From the deployment's Config, also when given one workspace's: the prefix and paths are never derived twice.
  const base = baseOf(config);
  const derived = Object.freeze({
    ...base,
    workspaceId: ws.id,
    workspaceWeight: ws.weight,
    queuePrefix: workspacePrefix(base.queuePrefix, ws.id),
    webhookPath: `${base.webhookPath.replace(/\/+$/, '')}/${ws.id}`,
    webhookSecrets: ws.secrets,
    workspaceApiUrl: ws.apiUrl,
    workspaceApiToken: ws.token,
    workspaceApiBurst: ws.burst,
    spoolDir: base.spoolDir === undefined ? undefined : `${base.spoolDir.replace(/\/+$/, '')}/${ws.id}`,
  });
  bases.set(derived, base);
  return derived;
}

/** The deployment's Config of each workspace's Config made by {@link workspaceConfig}. */
const bases = new WeakMap<object, Derivable>();
const baseOf = <C extends Derivable>(config: C): C => (bases.get(config) as C | undefined) ?? config;

/** The Config of every workspace the deployment serves: the config itself in a deployment of one. */
export function workspaceConfigs<C extends Derivable>(config: C): C[] {
  const base = baseOf(config);
  return base.workspaces ? base.workspaces.map((ws) => workspaceConfig(base, ws)) : [base];
}

/** A `--workspace` (or any choice of one workspace) that names none of the deployment's. */
export class WorkspaceChoiceError extends Error {
  readonly code = 'workspace_unknown';
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceChoiceError';
  }
}

/**
 * The Config of the workspace `id` names (a tool's `--workspace`). In a deployment of
 * one, `id` may be absent or {@link DEFAULT_WORKSPACE}; in a deployment of many it must
 * name one of the file's workspaces (absent: allowed only when the file has one).
 */
export function selectWorkspace<C extends Derivable>(deployment: C, id: string | undefined): C {
  const config = baseOf(deployment);
  const list = config.workspaces;
  if (!list) {
    if (id === undefined || id === DEFAULT_WORKSPACE) return config;
    throw new WorkspaceChoiceError(
      `--workspace ${printable(id)}: this deployment serves one workspace (no WORKSPACES_FILE); leave --workspace out, or set WORKSPACES_FILE`,
    );
  }
  const ids = list.map((w) => w.id);
  if (id === undefined) {
    if (list.length === 1) return workspaceConfig(config, list[0] as WorkspaceSpec);
    throw new WorkspaceChoiceError(`this deployment serves ${list.length} workspaces (${ids.join(', ')}): say which with --workspace <id>`);
  }
  const ws = list.find((w) => w.id === id);
  if (ws) return workspaceConfig(config, ws);
  const near = closest(id, ids);
  throw new WorkspaceChoiceError(
    `--workspace ${printable(id)}: no such workspace in ${config.workspacesFile ?? 'WORKSPACES_FILE'}${near ? ` (did you mean ${near}?)` : ''}; expected one of ${ids.join(', ')}`,
  );
}
