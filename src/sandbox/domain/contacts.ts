import { ApiError, invalid, notFound } from '../errors.js';
import type { Contact, Label, Teammate, Workspace } from '../types.js';

/** Who looks a contact up: only the view-phone permission matters. */
export interface Viewer {
  teammate: Pick<Teammate, 'viewPhone'>;
}

/** Phone numbers match on their last nine digits, whatever the spelling (spec: GET /contacts `phone`). */
export function phoneKey(phone: string): string {
  return phone.replace(/\D/g, '').slice(-9);
}

/** A parsed contact address: `id:<n>`, a bare id, `email:<e>` or `phone:<p>`. */
export type ContactAddress = { kind: 'id'; id: number } | { kind: 'email'; email: string } | { kind: 'phone'; phone: string };

/** Parses a contact address; unknown prefixes resolve to nothing (the full prefix list is not shown). */
export function parseAddress(raw: string | number): ContactAddress | null {
  if (typeof raw === 'number') return Number.isInteger(raw) ? { kind: 'id', id: raw } : null;
  const text = raw.trim();
  if (/^\d+$/.test(text)) return { kind: 'id', id: Number(text) };
  const m = /^(id|email|phone):(.+)$/i.exec(text);
  if (!m) return null;
  const prefix = m[1]!.toLowerCase();
  const value = m[2]!.trim();
  if (prefix === 'id') return /^\d+$/.test(value) ? { kind: 'id', id: Number(value) } : null;
  if (prefix === 'email') return { kind: 'email', email: value };
  return { kind: 'phone', phone: value };
}

/**
 * Finds the contact at an address inside the caller's workspace only (spec:
 * another workspace's contact answers 404). Looking up by phone needs the
 * view-phone permission, like the phone filter (our choice; not shown).
 */
export function findByAddress(ws: Workspace, auth: Viewer, address: ContactAddress): Contact | undefined {
  if (address.kind === 'id') return ws.contacts.get(address.id);
  if (address.kind === 'email') {
    const email = address.email.toLowerCase();
    return [...ws.contacts.values()].find((c) => c.email?.toLowerCase() === email);
  }
  if (!auth.teammate.viewPhone) throw new ApiError(403, 'Looking up by phone requires the view-phone permission.', 'missing_permission');
  const key = phoneKey(address.phone);
  return [...ws.contacts.values()].find((c) => c.phone !== null && phoneKey(c.phone) === key);
}

/** The contact at a path address, or 404. */
export function contactAt(ws: Workspace, auth: Viewer, raw: string): Contact {
  const address = parseAddress(raw);
  const contact = address ? findByAddress(ws, auth, address) : undefined;
  if (!contact) throw notFound('Contact');
  return contact;
}

/** A contact named in a body (`contact`, `contact_id`, merge sides): unknown is 422 naming the field. */
export function contactIn(ws: Workspace, auth: Viewer, raw: string | number, field: string): Contact {
  const address = parseAddress(raw);
  const contact = address ? findByAddress(ws, auth, address) : undefined;
  if (!contact) throw invalid(field, 'does not name a contact of this workspace');
  return contact;
}

/** A label by id or exact name; unknown is 422 (labels are never created by the API). */
export function labelIn(ws: Workspace, ref: string | number, field: string): Label {
  const label =
    typeof ref === 'number' || /^\d+$/.test(ref)
      ? (ws.labels.find((l) => l.id === Number(ref)) ?? ws.labels.find((l) => l.name === String(ref)))
      : ws.labels.find((l) => l.name === ref);
  if (!label) throw invalid(field, `no label "${ref}" in this workspace`);
  return label;
}
