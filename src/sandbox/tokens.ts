import { createHash } from 'node:crypto';
import { ABILITIES, type Ability } from '../spec/index.js';
import type { Token } from './types.js';

/** Every ability: the full-access and legacy keys carry these. */
export const ALL_ABILITIES: readonly Ability[] = ABILITIES;
/** Read abilities only. */
export const READ_ABILITIES: readonly Ability[] = ABILITIES.filter((a) => a.endsWith(':read'));
/** Contacts only (read, write, delete). */
export const CONTACT_ABILITIES: readonly Ability[] = ['contacts:read', 'contacts:write', 'contacts:delete'];

/** Fixed, documented token values so scripts and curl can use them; `--token` replaces the first. */
export const DEFAULT_TOKEN_VALUES = {
  full: 'sbx_full_acme',
  read: 'sbx_read_acme',
  contacts: 'sbx_contacts_acme',
  nophone: 'sbx_nophone_acme',
  expired: 'sbx_expired_acme',
  expiring: 'sbx_expiring_acme',
  legacy: 'sbx_legacy_acme',
  other: 'sbx_full_other',
} as const;

/**
 * Short hash used in the request log: the spec stores only a token's hash
 * (Authentication 2), and the log must never echo a raw token.
 */
export function tokenHash(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 12);
}

/** Public description of a token (what the CLI prints and `/_sandbox/tokens` lists). */
export interface TokenInfo {
  label: string;
  token: string;
  workspace_id: number;
  teammate_id: number;
  abilities: Ability[];
  expires_at: string | null;
  legacy: boolean;
}

/** Describes a token for printing; the sandbox shows values because its tokens are for local use only. */
export function describeToken(t: Token): TokenInfo {
  return {
    label: t.label,
    token: t.value,
    workspace_id: t.workspaceId,
    teammate_id: t.teammateId,
    abilities: [...t.abilities],
    expires_at: t.expiresAt === null ? null : new Date(t.expiresAt).toISOString(),
    legacy: t.legacy,
  };
}
