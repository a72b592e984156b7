import type { WebhookTarget } from './events/emitter.js';
import type { AddedWorkspace } from './seed/index.js';
import type { Workspace } from './types.js';

/** One workspace's settings in `createSandbox({ workspaces })`; every one is optional. */
export interface SandboxWorkspace {
  /** Short name the hooks (and `switchyard dev`) know it by. Added workspaces only (default `ws3`, `ws4`, …); the seeded two are `acme` and `other`. */
  key?: string;
  /** Display name. Added workspaces only (default `Workspace 3`, …). */
  name?: string;
  /** Value of its full-access token (default `sbx_full_acme`, `sbx_full_other`, then `sbx_full_<key>`). */
  token?: string;
  /** Where its events are POSTed (its events only); needs `secret`. */
  webhookUrl?: string;
  /** The secret its events are signed with. */
  secret?: string;
  /** Requests per 10 s per token of this workspace (its plan: 30, 60 or 100). Default: the sandbox's `burst`. */
  burst?: number;
}

/** How many workspaces one sandbox makes at most (the two seeded included). */
export const MAX_SANDBOX_WORKSPACES = 100;

const KEY = /^[a-z0-9][a-z0-9-]{0,39}$/;
const SEEDED_KEYS = ['acme', 'other'];

/** The key of the i-th workspace (0-based) when none is given: `acme`, `other`, then `ws3`, `ws4`, … */
export function defaultWorkspaceKey(i: number): string {
  return SEEDED_KEYS[i] ?? `ws${i + 1}`;
}

/** The first workspace's settings: `workspaces[0]`, over the single `token`/`webhookUrl`/`secret`/`burst` options of before. */
function firstOf(list: readonly SandboxWorkspace[], single: SandboxWorkspace): SandboxWorkspace {
  return { ...single, ...list[0] };
}

function checkEntry(ws: SandboxWorkspace, i: number): void {
  const at = `workspaces[${i}]`;
  if (i < 2 && (ws.key !== undefined || ws.name !== undefined)) {
    throw new Error(
      `${at}: the seeded workspace keeps its key ${SEEDED_KEYS[i]} and name; key and name are for added workspaces (from workspaces[2])`,
    );
  }
  if (ws.key !== undefined && !KEY.test(ws.key))
    throw new Error(`${at}.key: expected lower-case letters, digits and dashes (at most 40), got ${JSON.stringify(ws.key)}`);
  if (ws.token !== undefined && !/^\S+$/.test(ws.token)) throw new Error(`${at}.token: expected a non-empty value without spaces`);
  if (ws.webhookUrl && !ws.secret) throw new Error(`${at}.webhookUrl needs a secret (events are always signed)`);
  if (ws.burst !== undefined && (!Number.isInteger(ws.burst) || ws.burst < 1))
    throw new Error(`${at}.burst: expected a whole number of at least 1, got ${ws.burst}`);
}

/** The workspaces made beyond the seeded two, with their keys, names and token values; refuses a repeated key or token. */
export function resolveWorkspaces(list: readonly SandboxWorkspace[] = [], single: SandboxWorkspace = {}): SandboxWorkspace[] {
  if (list.length > MAX_SANDBOX_WORKSPACES)
    throw new Error(`workspaces: a sandbox makes at most ${MAX_SANDBOX_WORKSPACES} workspaces, got ${list.length}`);
  list.forEach(checkEntry);
  checkEntry(single, 0);
  const all = [firstOf(list, single), ...list.slice(1)];
  while (all.length < 2) all.push({});
  const resolved = all.map((ws, i) => {
    const key = ws.key ?? defaultWorkspaceKey(i);
    return { ...ws, key, name: ws.name ?? (i < 2 ? undefined : `Workspace ${i + 1}`), token: ws.token ?? `sbx_full_${key}` };
  });
  for (const field of ['key', 'token'] as const) {
    const seen = new Set<string>();
    resolved.forEach((ws, i) => {
      if (seen.has(ws[field]))
        throw new Error(
          `workspaces[${i}].${field}: ${field === 'key' ? JSON.stringify(ws.key) : 'the token'} is already another workspace's`,
        );
      seen.add(ws[field]);
    });
  }
  return resolved;
}

/** The added workspaces of a resolved list (from the third on), as the seed takes them. */
export function addedOf(resolved: readonly SandboxWorkspace[]): AddedWorkspace[] {
  return resolved.slice(2).map((ws) => ({ key: ws.key!, name: ws.name!, token: ws.token! }));
}

/** Each workspace's webhook target, matched to the seeded workspaces in order. */
export function targetsOf(resolved: readonly SandboxWorkspace[], workspaces: Iterable<Workspace>): WebhookTarget[] {
  return [...workspaces].map((ws, i) => ({ workspaceId: ws.id, url: resolved[i]?.webhookUrl, secret: resolved[i]?.secret }));
}
