import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config, WorkspaceSpec } from '../config/index.js';
import type { DevSandboxPlan } from '../runtime/index.js';
import type { Sandbox, SandboxWorkspace } from '../sandbox/index.js';
import { MAX_SANDBOX_WORKSPACES } from '../sandbox/internal.js';
import { UsageError } from './command.js';

/** One workspace of `switchyard dev --workspaces N` (see DevSandboxPlan). */
type DevWorkspace = NonNullable<DevSandboxPlan['workspaces']>[number];

/** Where `dev --workspaces` writes its workspaces for the project's other terminals (a WORKSPACES_FILE). */
export const DEV_WORKSPACES_FILE = 'dev-workspaces.json';

/** `--workspaces N` of `dev` and `sandbox`: a whole number from `min` to what one sandbox makes. */
export function workspacesFlag(value: string | undefined, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < min) {
    throw new UsageError(`--workspaces: expected a whole number of workspaces from ${min} to ${MAX_SANDBOX_WORKSPACES}, got "${value}"`);
  }
  if (n > MAX_SANDBOX_WORKSPACES) {
    throw new UsageError(`--workspaces: the sandbox makes at most ${MAX_SANDBOX_WORKSPACES} workspaces, got ${n}`);
  }
  return n;
}

/** The sandbox's settings of each served workspace: its key (past the seeded two), token, URL and secret. */
export function sandboxWorkspaces(list: readonly DevWorkspace[], firstSecret: string): SandboxWorkspace[] {
  return list.map((w, i) => ({
    ...(i >= 2 ? { key: w.id } : {}),
    token: w.token,
    webhookUrl: w.webhookUrl,
    secret: w.secret ?? firstSecret,
  }));
}

/**
 * The service's Config serving every workspace of the list (a deployment of
 * many, built in memory): each its sandbox token and secret; the first signs
 * with the service's WEBHOOK_SECRETS (the development secret).
 */
export function devWorkspacesConfig(config: Config, list: readonly DevWorkspace[]): Config {
  const workspaces = list.map((w): WorkspaceSpec =>
    Object.freeze({
      id: w.id,
      apiUrl: config.workspaceApiUrl ?? '',
      token: w.token,
      secrets: Object.freeze(w.secret ? [w.secret] : [...config.webhookSecrets]),
      burst: config.workspaceApiBurst,
      weight: 1,
    }),
  );
  return Object.freeze({ ...config, workspaces: Object.freeze(workspaces), workspacesFile: undefined });
}

/** The ids of the list a (kept) sandbox has no token for. */
export function missingWorkspaces(sandbox: Sandbox, list: readonly DevWorkspace[]): string[] {
  const tokens = new Set(sandbox.tokens.map((t) => t.token));
  return list.filter((w) => !tokens.has(w.token)).map((w) => w.id);
}

/**
 * Writes the served workspaces as a WORKSPACES_FILE (0600: it holds the
 * tokens and secrets) so `send`, `deliveries`, `trace`… `--workspace <id>` in
 * another terminal reach them; the returned function removes it.
 */
export function writeWorkspacesFile(config: Config, cwd: string): { file: string; remove: () => void } {
  const file = join(resolve(cwd, config.stateDir), DEV_WORKSPACES_FILE);
  const workspaces = (config.workspaces ?? []).map((w) => ({ id: w.id, apiUrl: w.apiUrl, token: w.token, secrets: w.secrets }));
  writeFileSync(file, `${JSON.stringify({ workspaces }, null, 2)}\n`, { mode: 0o600 });
  return { file, remove: () => rmSync(file, { force: true }) };
}

/** Removes a WORKSPACES_FILE an earlier `dev --workspaces` left (a crash); dev without the flag serves one workspace. */
export function removeWorkspacesFile(config: Pick<Config, 'stateDir'>, cwd: string): undefined {
  rmSync(join(resolve(cwd, config.stateDir), DEV_WORKSPACES_FILE), { force: true });
  return undefined;
}

/** What dev says about its workspaces: each one's id, sandbox name, URL and secret; how to write in one; how other terminals reach them. */
export function workspaceLines(sandbox: Sandbox, plan: DevSandboxPlan, list: readonly DevWorkspace[], stateDir: string): string[] {
  const byKey = new Map([...sandbox.state.workspaces.values()].map((ws) => [ws.key, ws]));
  const width = Math.max(...list.map((w) => w.id.length));
  const lines = [`${list.length} workspace${list.length === 1 ? '' : 's'}, each its own webhook URL, signing secret and sandbox token:`];
  for (const w of list) {
    const ws = byKey.get(w.id);
    const secret = w.secret ? `secret kept in ${join(stateDir, `dev-secret-${w.id}`)}` : 'signed with WEBHOOK_SECRETS';
    lines.push(
      `  ${w.id.padEnd(width)}  ${ws?.name ?? w.id} (sandbox workspace ${ws?.id ?? '?'}): events to ${w.webhookUrl}, ${secret}; token ${w.token}`,
    );
  }
  const example = list[1] ?? list[0]!;
  const channel = byKey.get(example.id)?.channels[0]?.id ?? 0;
  const body = { workspace: example.id, contact: { name: 'Ann', email: 'ann@example.com' }, channel_id: channel, body: 'Hello' };
  lines.push(
    `a customer writes in workspace ${example.id} ("workspace" takes any id above): curl -X POST http://127.0.0.1:${plan.port}/_sandbox/inbound ` +
      `-H 'content-type: application/json' -d '${JSON.stringify(body)}'`,
  );
  lines.push(
    `from another terminal: switchyard send --workspace ${example.id} message.received ` +
      `(it finds these workspaces in ${join(stateDir, DEV_WORKSPACES_FILE)} while dev runs; deliveries, trace, waits, dlq, replay take --workspace <id> too)`,
  );
  return lines;
}
