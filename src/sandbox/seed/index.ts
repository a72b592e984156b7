import type { IdSequence } from '../ids.js';
import { ALL_ABILITIES, CONTACT_ABILITIES, DEFAULT_TOKEN_VALUES, READ_ABILITIES } from '../tokens.js';
import type { Token, Workspace } from '../types.js';
import { seedAcme } from './acme.js';
import { applyExtras, type SeedExtras } from './extras.js';
import { seedOther } from './other.js';
import { routingSettings } from './empty-workspace.js';

export { SeedExtras } from './extras.js';

/** The seeded world: both workspaces and the printed tokens. */
export interface Seeded {
  workspaces: Map<number, Workspace>;
  tokens: Token[];
}

/**
 * Builds the seeded state. Token set (spec: Authentication): full, read-only,
 * contacts-only, one of the teammate without view-phone, an expired one, one
 * expiring an hour after seeding (for time-control tests), a legacy
 * full-access key, and a full token of the second workspace.
 */
export function buildSeed(ids: IdSequence, now: number, opts: { fullToken?: string; extras?: SeedExtras }): Seeded {
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
      value: DEFAULT_TOKEN_VALUES.other,
      workspaceId: other.id,
      teammateId: other.teammates[0]!.id,
      abilities: [...ALL_ABILITIES],
      expiresAt: null,
      legacy: false,
    },
  ];
  return {
    workspaces: new Map([
      [acme.id, acme],
      [other.id, other],
    ]),
    tokens,
  };
}
