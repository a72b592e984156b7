import type { Deal, PipelineStage, Workspace } from '../types.js';

/**
 * Spec, Deal status: the stage is the verdict. A Won stage makes the deal won,
 * a Lost stage lost, an open stage open (reopening a closed deal clears
 * `closed_at` and the lost reason).
 */
export function applyStage(deal: Deal, stage: PipelineStage, now: number): void {
  deal.stageId = stage.id;
  if (stage.kind === deal.status) return;
  deal.status = stage.kind;
  if (stage.kind === 'open') {
    deal.closedAt = null;
    deal.closedLostReason = null;
  } else {
    deal.closedAt = now;
  }
}

/** Moves a deal to its pipeline's Won or Lost stage (used when a lifecycle outcome settles it). */
export function settleDeal(ws: Workspace, deal: Deal, kind: 'won' | 'lost', now: number): void {
  const stage = ws.pipelines.find((p) => p.id === deal.pipelineId)?.stages.find((s) => s.kind === kind);
  if (stage) applyStage(deal, stage, now);
}
