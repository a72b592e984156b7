import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../config/index.js';

type Env = Record<string, string | undefined>;

/** The sandbox `switchyard dev` runs in-process: where it listens and where its signed events go. */
export interface DevSandboxPlan {
  readonly port: number;
  /** The full-access token of its first workspace (the handlers call the API with it). */
  readonly token: string;
  /** Where its events go (signed with the first of the service's WEBHOOK_SECRETS). */
  readonly webhookUrl: string;
  /** With `--workspaces N`: the N sandbox workspaces the service serves, each its own URL, secret and token. */
  readonly workspaces?: readonly DevWorkspacePlan[];
}

/** One workspace of `switchyard dev --workspaces N`: a sandbox workspace served as a workspace of the deployment. */
export interface DevWorkspacePlan {
  /** Its id in the deployment and key in the sandbox: `acme`, `other`, then `ws3`, `ws4`, … */
  readonly id: string;
  /** Its sandbox full-access token. */
  readonly token: string;
  /** `<receiver><WEBHOOK_PATH>/<id>`: where its events go. */
  readonly webhookUrl: string;
  /** Its signing secret, kept in `<SWITCHYARD_HOME>/dev-secret-<id>`; absent for the first, which signs with WEBHOOK_SECRETS. */
  readonly secret?: string;
}

/** What `switchyard dev`'s flags change in its plan. */
export interface DevOptions {
  /** `--workspaces N`: the ids (the sandbox's keys) of the N sandbox workspaces served as a deployment of many; absent: one, as always. */
  readonly workspaces?: readonly string[];
}

/** What `switchyard dev` runs with, worked out from the environment before anything starts. */
export interface DevPlan {
  /** The environment of the service: loopback HOST, the dev secret, the sandbox's API URL and token. */
  readonly env: Readonly<Env>;
  /** Lines for the person at the terminal. */
  readonly notes: readonly string[];
  /** Absent when WORKSPACE_API_URL names a real workspace. */
  readonly sandbox?: DevSandboxPlan;
}

export const SANDBOX_TOKEN = 'sbx_full_acme';

/** A random value kept in `<SWITCHYARD_HOME>/<name>`, made on first use. */
function keptSecret(dir: string, name: string, prefix: string): string {
  const file = join(dir, name);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, `${prefix}${randomBytes(16).toString('hex')}`, { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

/** Whether HOST binds loopback only. */
function loopback(host: string): boolean {
  return host === 'localhost' || /^127\./.test(host) || host === '::1' || host === '[::1]';
}

function sandboxPort(value: string | undefined): number {
  const port = Number(value ?? 4010);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ConfigError([{ variable: 'SANDBOX_PORT', problem: `expected a port from 1 to 65535, got "${value}"` }]);
  }
  return port;
}

/** How the sandbox reaches the receiver: loopback when the receiver binds every interface. */
function receiverHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * `switchyard dev`'s defaults on top of `env`: the receiver binds loopback
 * unless HOST is set; without WEBHOOK_SECRETS(_FILE) a development secret is
 * kept in `<SWITCHYARD_HOME>/dev-secret`; without WORKSPACE_API_URL the
 * sandbox listens on SANDBOX_PORT (4010), sends its events to the receiver,
 * and the handlers call its API with token sbx_full_acme.
 */
export function devPlan(env: Readonly<Env>, cwd: string, options: DevOptions = {}): DevPlan {
  const out: Env = { ...env, HOST: env['HOST'] || '127.0.0.1' };
  const notes: string[] = [];
  const state = env['SWITCHYARD_HOME'] || '.switchyard';
  if (!env['WEBHOOK_SECRETS'] && !env['WEBHOOK_SECRETS_FILE']) {
    out['WEBHOOK_SECRETS'] = keptSecret(resolve(cwd, state), 'dev-secret', 'dev_');
    const secretFile = join(state, 'dev-secret');
    notes.push(`WEBHOOK_SECRETS=${out['WEBHOOK_SECRETS']} (development secret, kept in ${secretFile}; send, replay and sign use it too)`);
  }
  const receiverUrl = `http://${receiverHost(out['HOST'] as string)}:${env['PORT'] || 3000}`;
  if (!env['ADMIN_USER'] && !env['ADMIN_PASSWORD']) {
    if (loopback(out['HOST'] as string)) {
      // Loopback only: the dashboard is on, with a password kept beside the dev secret.
      out['ADMIN_USER'] = 'dev';
      out['ADMIN_PASSWORD'] = keptSecret(resolve(cwd, state), 'admin-password', '');
      const pages =
        `dashboard at ${receiverUrl}/admin, deliveries at ${receiverUrl}/admin/deliveries, ` +
        `sleeping and waiting runs at ${receiverUrl}/admin/waits`;
      const login = `user dev, password ${out['ADMIN_PASSWORD']}, kept in ${join(state, 'admin-password')}`;
      notes.push(`${pages} (${login}; loopback only)`);
    } else {
      notes.push(
        `dashboard off: HOST ${out['HOST']} is not loopback; ` +
          'set ADMIN_USER and ADMIN_PASSWORD to serve /admin, /admin/deliveries and /admin/waits',
      );
    }
  }
  if (options.workspaces !== undefined) refuseWorkspacesBeside(env);
  if (env['WORKSPACE_API_URL']) {
    const token = env['WORKSPACE_API_TOKEN']
      ? 'WORKSPACE_API_TOKEN'
      : env['WORKSPACE_API_TOKEN_FILE']
        ? 'WORKSPACE_API_TOKEN_FILE'
        : 'none: WORKSPACE_API_TOKEN is unset';
    const workspace = `workspace API at ${env['WORKSPACE_API_URL']} (WORKSPACE_API_URL; token ${token})`;
    notes.push(`${workspace}; no sandbox runs: events come from that workspace's webhooks`);
    return { env: out, notes };
  }

  const port = sandboxPort(env['SANDBOX_PORT']);
  const webhookUrl = `http://${receiverHost(out['HOST'] as string)}:${env['PORT'] || 3000}${env['WEBHOOK_PATH'] || '/webhooks'}`;
  out['WORKSPACE_API_URL'] = `http://127.0.0.1:${port}/api/v1`;
  // The handlers call the sandbox with its own token: a WORKSPACE_API_TOKEN left in the shell (a real
  // workspace's) would only be refused there, and is never sent to it.
  out['WORKSPACE_API_TOKEN'] = SANDBOX_TOKEN;
  delete out['WORKSPACE_API_TOKEN_FILE'];
  if ((env['WORKSPACE_API_TOKEN'] && env['WORKSPACE_API_TOKEN'] !== SANDBOX_TOKEN) || env['WORKSPACE_API_TOKEN_FILE']) {
    notes.push(
      'WORKSPACE_API_TOKEN is set but WORKSPACE_API_URL is not: ' +
        'the handlers call the sandbox with its own token (set WORKSPACE_API_URL too to use a real workspace)',
    );
  }
  if (options.workspaces !== undefined) {
    const workspaces = devWorkspaces(options.workspaces, webhookUrl, resolve(cwd, state));
    notes.push(`sandbox workspace API at ${out['WORKSPACE_API_URL']}, ${workspaces.length} of its workspaces served (--workspaces)`);
    return { env: out, notes, sandbox: { port, token: SANDBOX_TOKEN, webhookUrl, workspaces } };
  }
  notes.push(`sandbox workspace API at ${out['WORKSPACE_API_URL']} (token ${SANDBOX_TOKEN}); its events go to ${webhookUrl}`);
  return { env: out, notes, sandbox: { port, token: SANDBOX_TOKEN, webhookUrl } };
}

/** The workspaces of `--workspaces`: ids, tokens, `<webhookUrl>/<id>`, and a kept secret each but the first. */
function devWorkspaces(ids: readonly string[], webhookUrl: string, stateDir: string): DevWorkspacePlan[] {
  return ids.map((id, i) => {
    const own = { id, token: `sbx_full_${id}`, webhookUrl: `${webhookUrl.replace(/\/+$/, '')}/${id}` };
    return i === 0 ? own : { ...own, secret: keptSecret(stateDir, `dev-secret-${id}`, 'dev_') };
  });
}

/** `--workspaces` makes the deployment from the sandbox: a real workspace or a WORKSPACES_FILE beside it would be ignored. */
function refuseWorkspacesBeside(env: Readonly<Env>): void {
  for (const name of ['WORKSPACE_API_URL', 'WORKSPACES_FILE']) {
    if (!env[name]) continue;
    throw new ConfigError([
      {
        variable: name,
        problem: `set together with --workspaces, which serves sandbox workspaces (each its own token, secret and webhook URL); expected one or the other: unset ${name}, or leave out --workspaces`,
      },
    ]);
  }
}
