import { z } from 'zod';
import { invalid } from '../errors.js';
import type { SandboxState } from '../state.js';
import type { Workspace } from '../types.js';

/** How a hook names a workspace: its key (`acme`, `other`, `ws3`, …) or its id (a number, or digits). */
export const WorkspaceRef = z.union([z.string().min(1), z.number().int()]);

/**
 * The workspace a hook acts on: the one `ref` names, the first (Acme) when
 * none is named. A name no workspace has is 422 on `field`, listing the
 * workspaces there are (the sandbox is local: its workspaces are no secret).
 */
export function chosenWorkspace(state: SandboxState, ref: string | number | undefined, field = 'workspace'): Workspace {
  if (ref === undefined) return state.firstWorkspace();
  const ws = state.findWorkspace(ref);
  if (ws) return ws;
  const known = [...state.workspaces.values()].map((w) => `${w.key} (id ${w.id})`).join(', ');
  throw invalid(field, `no workspace ${JSON.stringify(ref)} in this sandbox; expected a key or id of one of: ${known}`);
}

/** The workspace a query parameter `workspace` names, or undefined when it is absent (every workspace). */
export function queriedWorkspace(state: SandboxState, value: string | undefined): Workspace | undefined {
  return value === undefined || value === '' ? undefined : chosenWorkspace(state, value);
}
