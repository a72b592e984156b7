import { invalid } from '../errors.js';
import type { Contact, LifecycleStage, Workspace } from '../types.js';
import { settleDeal } from './deals.js';

/** A lifecycle stage by id or exact name; unknown is 422 (spec: PUT lifecycle). */
export function stageIn(ws: Workspace, ref: string | number, field: string): LifecycleStage {
  const byId = typeof ref === 'number' || /^\d+$/.test(ref) ? ws.stages.find((s) => s.id === Number(ref)) : undefined;
  const stage = byId ?? ws.stages.find((s) => s.name === String(ref));
  if (!stage) throw invalid(field, `no lifecycle stage "${ref}" in this workspace`);
  return stage;
}

/** Result of a lifecycle move: `previous` null when nothing changed. */
export interface LifecycleMove {
  previous: LifecycleStage | null;
  lifecycle: LifecycleStage;
  changed: boolean;
}

/**
 * Spec, Contact lifecycle: moving to the stage already held changes nothing
 * (`previous: null`); reaching a stage whose outcome is `won` settles the
 * contact's open deals, which the sandbox marks won (moved to their
 * pipeline's Won stage).
 */
export function moveLifecycle(ws: Workspace, contact: Contact, stage: LifecycleStage, now: number): LifecycleMove {
  if (contact.lifecycleStageId === stage.id) return { previous: null, lifecycle: stage, changed: false };
  const previous = ws.stages.find((s) => s.id === contact.lifecycleStageId) ?? null;
  contact.lifecycleStageId = stage.id;
  contact.updatedAt = now;
  if (stage.outcome === 'won') {
    for (const deal of ws.deals.values()) {
      if (deal.status === 'open' && deal.contactIds.includes(contact.id)) settleDeal(ws, deal, 'won', now);
    }
  }
  return { previous, lifecycle: stage, changed: true };
}
