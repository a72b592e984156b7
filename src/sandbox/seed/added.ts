import type { IdSequence } from '../ids.js';
import { ALL_ABILITIES } from '../tokens.js';
import type { Token, Workspace } from '../types.js';
import { emptyWorkspace, routingSettings, standardSettings } from './empty-workspace.js';

/** A workspace made beyond the two seeded ones (for benches and `dev --workspaces`). */
export interface AddedWorkspace {
  key: string;
  name: string;
  /** Value of its full-access token. */
  token: string;
}

/**
 * An added workspace: the standard settings, one owner with the view-phone
 * permission, one WhatsApp channel, no records; and its full-access token.
 */
export function seedAdded(ids: IdSequence, added: AddedWorkspace): { workspace: Workspace; token: Token } {
  const ws = emptyWorkspace(ids, added.name, added.key);
  standardSettings(ws, ids);
  const owner = { id: ids.take(), name: `${added.name} Owner`, email: `owner@${added.key}.test`, active: true, viewPhone: true };
  ws.teammates.push(owner);
  ws.channels.push({ id: ids.take(), name: 'WhatsApp', type: 'whatsapp', public: false });
  routingSettings(ws, ids, ['Support'], `${added.name} Assistant`);
  const token: Token = {
    label: `${added.key}-full`,
    value: added.token,
    workspaceId: ws.id,
    teammateId: owner.id,
    abilities: [...ALL_ABILITIES],
    expiresAt: null,
    legacy: false,
  };
  return { workspace: ws, token };
}
