import type { IdSequence } from '../ids.js';
import { ALL_ABILITIES, CONTACT_ABILITIES, DEFAULT_TOKEN_VALUES, READ_ABILITIES } from '../tokens.js';
import type { Token, Workspace } from '../types.js';
import { seedAcme } from './acme.js';
import { applyExtras, type SeedExtras } from './extras.js';
import { seedOther } from './other.js';
import { routingSettings } from './empty-workspace.js';
import { seedAdded, type AddedWorkspace } from './added.js';

export { SeedExtras } from './extras.js';
export type { AddedWorkspace } from './added.js';

/** What the seed is built from: token values of the two seeded workspaces, extra records of Acme, added workspaces. */
export interface SeedOptions {
  fullToken?: string;
  otherToken?: string;
  extras?: SeedExtras;
  added?: readonly AddedWorkspace[];
}

/** The seeded world: every workspace and the printed tokens. */
export interface Seeded {
  workspaces: Map<number, Workspace>;
  tokens: Token[];
}

/**
 * Builds the seeded state. Token set (spec: Authentication): full, read-only,
 * contacts-only, one of the teammate without view-phone, an expired one, one
 * expiring an hour after seeding (for time-control tests), a legacy
 * full-access key, and a full token of the second workspace; then the
 * added workspaces, each with its full-access token.
 */
export function buildSeed(ids: IdSequence, now: number, opts: SeedOptions): Seeded {
  const acme = seedAcme(ids, now);
  const other = seedOther(ids, now);
  if (opts.extras) applyExtras(acme, ids, now, opts.extras);
  routingSettings(acme, ids, ['Support', 'Sales'], 'Acme Assistant');
  routingSettings(other, ids, ['Support'], 'Other Assistant');
  const [owner, noPhone] = acme.teammates;
  const base = { workspaceId: acme.id, teammateId: owner!.id, expiresAt: null, legacy: false };
  const tokens: Token[] = [
    { ...base, label: 'full', value: opts.fullToken ?? DEFAULT_TOKEN_VALUES.full, abilities: [...ALL_ABILITIES] },
    { ...base, label: 'read-only', value: DEFAULT_TOKEN_VALUES.read, abilities: [...READ_ABILITIES] },
    { ...base, label: 'contacts-only', value: DEFAULT_TOKEN_VALUES.contacts, abilities: [...CONTACT_ABILITIES] },
    { ...base, label: 'no-view-phone', value: DEFAULT_TOKEN_VALUES.nophone, teammateId: noPhone!.id, abilities: [...ALL_ABILITIES] },
    { ...base, label: 'expired', value: DEFAULT_TOKEN_VALUES.expired, abilities: [...ALL_ABILITIES], expiresAt: now - 864e5 },
    { ...base, label: 'expiring-1h', value: DEFAULT_TOKEN_VALUES.expiring, abilities: [...ALL_ABILITIES], expiresAt: now + 36e5 },
    { ...base, label: 'legacy', value: DEFAULT_TOKEN_VALUES.legacy, abilities: [...ALL_ABILITIES], legacy: true },
    {
      label: 'other-workspace-full',
      value: opts.otherToken ?? DEFAULT_TOKEN_VALUES.other,
      workspaceId: other.id,
      teammateId: other.teammates[0]!.id,
      abilities: [...ALL_ABILITIES],
      expiresAt: null,
      legacy: false,
    },
  ];
  const workspaces = new Map([
    [acme.id, acme],
    [other.id, other],
  ]);
  // Added after every seeded record, so the seeded ids are the same with or without them.
  for (const added of opts.added ?? []) {
    const { workspace, token } = seedAdded(ids, added);
    workspaces.set(workspace.id, workspace);
    tokens.push(token);
  }
  return { workspaces, tokens };
}
