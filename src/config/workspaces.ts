import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { closest, isLoopbackHost } from '../util/index.js';

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
  return Object.freeze({
    ...config,
    workspaceId: ws.id,
    workspaceWeight: ws.weight,
    queuePrefix: workspacePrefix(config.queuePrefix, ws.id),
    webhookPath: `${config.webhookPath.replace(/\/+$/, '')}/${ws.id}`,
    webhookSecrets: ws.secrets,
    workspaceApiUrl: ws.apiUrl,
    workspaceApiToken: ws.token,
    workspaceApiBurst: ws.burst,
    spoolDir: config.spoolDir === undefined ? undefined : `${config.spoolDir.replace(/\/+$/, '')}/${ws.id}`,
  });
}

/** The Config of every workspace the deployment serves: the config itself in a deployment of one. */
export function workspaceConfigs<C extends Derivable>(config: C): C[] {
  return config.workspaces ? config.workspaces.map((ws) => workspaceConfig(config, ws)) : [config];
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
export function selectWorkspace<C extends Derivable>(config: C, id: string | undefined): C {
  const list = config.workspaces;
  if (!list) {
    if (id === undefined || id === DEFAULT_WORKSPACE) return config;
    throw new WorkspaceChoiceError(
      `--workspace ${id}: this deployment serves one workspace (no WORKSPACES_FILE); leave --workspace out, or set WORKSPACES_FILE`,
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
    `--workspace ${id}: no such workspace in ${config.workspacesFile ?? 'WORKSPACES_FILE'}${near ? ` (did you mean ${near}?)` : ''}; expected one of ${ids.join(', ')}`,
  );
}

const entry = z
  .object({
    id: z.string().regex(WORKSPACE_ID, 'expected lower-case letters, digits and dashes (at most 40), starting with a letter or digit'),
    apiUrl: z.string().min(1, 'expected the API base URL, e.g. https://api.example.com/api/v1'),
    token: z.string().min(1).optional(),
    tokenEnv: z.string().min(1).optional(),
    tokenFile: z.string().min(1).optional(),
    secrets: z
      .array(z.string().min(1, 'expected a non-empty secret'))
      .min(1, 'expected at least one webhook secret (the current one first)'),
    burst: z.number().int().min(1).max(10_000).optional(),
    weight: z.number().int().min(1).max(100).optional(),
  })
  .strict();

const file = z.object({ workspaces: z.array(z.unknown()).min(1, 'expected at least one workspace') }).strict();

/** A problem of the file, as loadConfig lists them. */
export interface WorkspacesProblem {
  readonly variable: string;
  readonly problem: string;
}

/**
 * Reads and checks WORKSPACES_FILE: every problem named by its entry
 * (`workspaces[1] ("beta"): secrets: …`), never a secret's value. `env` is where
 * `tokenEnv` is read; a relative `tokenFile` is read from the working directory.
 */
export function readWorkspacesFile(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  defaults: { burst: number },
  problems: WorkspacesProblem[],
): WorkspaceSpec[] | undefined {
  const say = (problem: string) => problems.push({ variable: 'WORKSPACES_FILE', problem });
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    say(
      code
        ? `cannot read "${path}" (${code}); expected a readable JSON file`
        : `"${path}" is not JSON (${(err as Error).message}); expected {"workspaces": [{"id": …, "apiUrl": …, "token": …, "secrets": […]}]}`,
    );
    return undefined;
  }
  const top = file.safeParse(raw);
  if (!top.success) {
    say(`${path}: ${top.error.issues.map((i) => `${i.path.join('.') || 'the file'}: ${i.message}`).join('; ')}`);
    return undefined;
  }
  const out: WorkspaceSpec[] = [];
  const before = problems.length;
  top.data.workspaces.forEach((item, i) => {
    const idOf = (item as { id?: unknown } | null)?.id;
    const name = `workspaces[${i}]${typeof idOf === 'string' ? ` ("${idOf}")` : ''}`;
    const parsed = entry.safeParse(item);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) say(`${name}: ${issue.path.join('.') || 'entry'}: ${issue.message}`);
      return;
    }
    const e = parsed.data;
    const token = entryToken(e, env, (p) => say(`${name}: ${p}`));
    const url = entryUrl(e.apiUrl, (p) => say(`${name}: apiUrl: ${p}`));
    if (token === undefined || url === undefined) return;
    if (out.some((w) => w.id === e.id)) {
      say(`${name}: id: "${e.id}" is used twice; expected each workspace once`);
      return;
    }
    out.push(
      Object.freeze({
        id: e.id,
        apiUrl: url,
        token,
        secrets: Object.freeze([...e.secrets]),
        burst: e.burst ?? defaults.burst,
        weight: e.weight ?? 1,
      }),
    );
  });
  return problems.length === before ? out : undefined;
}

function entryToken(
  e: { token?: string | undefined; tokenEnv?: string | undefined; tokenFile?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
  say: (problem: string) => void,
): string | undefined {
  const given = [e.token !== undefined && 'token', e.tokenEnv !== undefined && 'tokenEnv', e.tokenFile !== undefined && 'tokenFile'].filter(
    Boolean,
  );
  if (given.length !== 1) {
    say(`expected exactly one of token, tokenEnv or tokenFile, got ${given.length === 0 ? 'none' : given.join(' and ')}`);
    return undefined;
  }
  if (e.token !== undefined) return e.token;
  if (e.tokenEnv !== undefined) {
    const v = (env[e.tokenEnv] ?? '').trim();
    if (v === '') say(`tokenEnv: the variable ${e.tokenEnv} is unset or empty; expected it to hold the workspace's API token`);
    return v === '' ? undefined : v;
  }
  try {
    const v = readFileSync(e.tokenFile as string, 'utf8').trim();
    if (v === '') say(`tokenFile: "${e.tokenFile}" is empty; expected the workspace's API token`);
    return v === '' ? undefined : v;
  } catch (err) {
    say(`tokenFile: cannot read "${e.tokenFile}" (${(err as NodeJS.ErrnoException).code ?? 'error'}); expected a file holding the token`);
    return undefined;
  }
}

function entryUrl(v: string, say: (problem: string) => void): string | undefined {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    say(`expected an http(s) URL, got an unparseable value`);
    return undefined;
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname))) {
    say(
      `expected https (plain http only for a local sandbox on 127.0.0.1 or localhost: the token must not travel in clear), got ${u.protocol}//${u.host}`,
    );
    return undefined;
  }
  return v.replace(/\/+$/, '');
}
