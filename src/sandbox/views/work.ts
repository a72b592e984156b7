import { iso, isoOrNull } from '../clock.js';
import { money } from '../money.js';
import type { Deal, Lead, Task, Workspace } from '../types.js';

/** Deal as the API answers it. */
export function dealView(ws: Workspace, d: Deal): Record<string, unknown> {
  const pipeline = ws.pipelines.find((p) => p.id === d.pipelineId);
  const stage = pipeline?.stages.find((s) => s.id === d.stageId);
  return {
    id: d.id,
    name: d.name,
    pipeline: { id: d.pipelineId, name: pipeline?.name ?? '' },
    stage: { id: d.stageId, name: stage?.name ?? '' },
    status: d.status,
    amount: money(d.amountCents),
    close_date: d.closeDate,
    owner_id: d.ownerId,
    organization_id: d.organizationId,
    source: d.source,
    closed_at: isoOrNull(d.closedAt),
    closed_lost_reason: d.closedLostReason,
    contact_ids: [...d.contactIds],
    created_at: iso(d.createdAt),
  };
}

/** Task as the API answers it. */
export function taskView(t: Task): Record<string, unknown> {
  return {
    id: t.id,
    title: t.title,
    description: t.description,
    type: t.type,
    status: t.status,
    due_at: iso(t.dueAt),
    completed_at: isoOrNull(t.completedAt),
    assignee_id: t.assigneeId,
    created_by: t.createdBy,
    contact_id: t.contactId,
  };
}

/** Lead (fields fixed by the project's event contract): `value` a decimal string or null. */
export function leadView(l: Lead): Record<string, unknown> {
  return {
    id: l.id,
    contact_id: l.contactId,
    name: l.name,
    value: l.valueCents === null ? null : money(l.valueCents),
    source: l.source,
    outcome: l.outcome,
    created_at: iso(l.createdAt),
  };
}
