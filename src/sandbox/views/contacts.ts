import { iso } from '../clock.js';
import type { Contact, LifecycleStage, Workspace } from '../types.js';

/** Stage object of the lifecycle answers: id, name, role, outcome. */
export function stageView(s: LifecycleStage): { id: number; name: string; role: string | null; outcome: string | null } {
  return { id: s.id, name: s.name, role: s.role, outcome: s.outcome };
}

/**
 * Masks a phone number for teammates without the view-phone permission
 * (spec: Contact.phone): every digit but the last four becomes `*`.
 */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, '').length;
  let seen = 0;
  return phone.replace(/\d/g, (d) => (++seen > digits - 4 ? d : '*'));
}

/**
 * Masks every phone number in an API answer. The Contact is the only resource
 * of the spec with a `phone` field, so every string under a `phone` key is a
 * contact's number, whether the answer is one contact, a page or a merge.
 */
export function maskPhones(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskPhones);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === 'phone' && typeof v === 'string' ? maskPhone(v) : maskPhones(v)]),
  );
}

/** LabelRefs of a contact, in the workspace's label order. */
export function labelRefs(ws: Workspace, c: Contact): { id: number; name: string }[] {
  return ws.labels.filter((l) => c.labelIds.includes(l.id)).map((l) => ({ id: l.id, name: l.name }));
}

/**
 * Contact as the API answers it, phone in full (a route's guard masks it for
 * a teammate without view-phone); `include` adds `labels` and `lifecycle`
 * blocks (their shape: not shown, our choice).
 */
export function contactView(ws: Workspace, c: Contact, opts: { include?: readonly string[] } = {}): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: c.id,
    name: c.name,
    phone: c.phone,
    email: c.email,
    lifecycle_stage_id: c.lifecycleStageId,
    blocked: c.blocked,
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
  if (opts.include?.includes('labels')) view.labels = labelRefs(ws, c);
  if (opts.include?.includes('lifecycle')) {
    const stage = ws.stages.find((s) => s.id === c.lifecycleStageId);
    view.lifecycle = stage ? stageView(stage) : null;
  }
  return view;
}

/** `include=labels,lifecycle` -> the known names; unknown names are ignored (spec). */
export function parseInclude(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s === 'labels' || s === 'lifecycle');
}
