import { Hono } from 'hono';
import { z } from 'zod';
import { DEAL_STATUSES, MAX_CHARS } from '../../spec/index.js';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { applyStage } from '../domain/deals.js';
import { contactIdIn, pipelineIn, teammateIn } from '../domain/refs.js';
import { invalid } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { Amount, toCents } from '../money.js';
import { newestFirst, paginate, perPage } from '../pagination.js';
import type { Deal, Workspace } from '../types.js';
import { body, CalendarDate, intParam, recordAt, strictBody, tooLong } from '../validation.js';
import { dealView } from '../views/work.js';

const Name = z.string().trim().min(1, 'is required').max(MAX_CHARS.dealName, tooLong(MAX_CHARS.dealName));
const NewDeal = strictBody({
  name: Name,
  contact_id: z.number().int().nullable().optional(),
  amount: Amount.nullable().optional(),
  source: z.string().nullable().optional(),
  pipeline_id: z.number().int().nullable().optional(),
  stage_id: z.number().int().nullable().optional(),
  owner_id: z.number().int().nullable().optional(),
  close_date: CalendarDate.nullable().optional(),
});
const DealPatch = strictBody({
  name: Name.optional(),
  amount: Amount.nullable().optional(),
  source: z.string().optional(),
  owner_id: z.number().int().nullable().optional(),
  close_date: CalendarDate.nullable().optional(),
  stage_id: z.number().int().optional(),
  closed_lost_reason: z.string().max(MAX_CHARS.closedLostReason, tooLong(MAX_CHARS.closedLostReason)).nullable().optional(),
});

function checkOwner(ws: Workspace, id: number | null | undefined): void {
  if (id != null) teammateIn(ws, id, 'owner_id');
}

/** Deals (spec: Deals, Deal status: the stage is the verdict). */
export function dealRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  const { state } = deps;
  const dealAt = (ws: Workspace, raw: string): Deal => recordAt(ws.deals, raw, 'Deal');

  app.get('/deals', guard(deps, 'deals:read'), (c) => {
    const auth = caller(c);
    const q = c.req.query();
    if (q.status && !(DEAL_STATUSES as readonly string[]).includes(q.status))
      throw invalid('status', `must be one of ${DEAL_STATUSES.join(', ')}`);
    const contactId = intParam(q.contact_id, 'contact_id');
    if (contactId !== undefined) contactIdIn(auth.workspace, contactId, 'contact_id');
    const pipelineId = intParam(q.pipeline_id, 'pipeline_id');
    if (pipelineId !== undefined) pipelineIn(auth.workspace, pipelineId, 'pipeline_id');
    const rows = [...auth.workspace.deals.values()].filter(
      (d) =>
        (!q.status || d.status === q.status) &&
        (contactId === undefined || d.contactIds.includes(contactId)) &&
        (pipelineId === undefined || d.pipelineId === pipelineId),
    );
    return c.json(paginate(rows, newestFirst, (d) => dealView(auth.workspace, d), { perPage: perPage(q.per_page), cursor: q.cursor }));
  });

  // Spec: contact_id must belong to the workspace (422); source defaults to `other`; the default
  // pipeline is the workspace's first, the default stage the pipeline's first open stage.
  app.post('/deals', guard(deps, 'deals:write'), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const b = await body(c, NewDeal);
    if (b.contact_id != null) contactIdIn(ws, b.contact_id, 'contact_id');
    const pipeline = b.pipeline_id != null ? pipelineIn(ws, b.pipeline_id, 'pipeline_id') : ws.pipelines[0]!;
    const stage = b.stage_id != null ? pipeline.stages.find((s) => s.id === b.stage_id) : pipeline.stages.find((s) => s.kind === 'open');
    if (!stage) throw invalid('stage_id', "must be a stage of the deal's pipeline");
    checkOwner(ws, b.owner_id);
    const now = state.now();
    const deal: Deal = {
      id: state.ids.take(),
      name: b.name,
      pipelineId: pipeline.id,
      stageId: stage.id,
      status: 'open',
      amountCents: toCents(b.amount ?? 0),
      closeDate: b.close_date ?? null,
      ownerId: b.owner_id ?? null,
      organizationId: null,
      source: b.source ?? 'other',
      closedAt: null,
      closedLostReason: null,
      contactIds: b.contact_id != null ? [b.contact_id] : [],
      createdAt: now,
    };
    applyStage(deal, stage, now);
    ws.deals.set(deal.id, deal);
    return c.json({ data: dealView(ws, deal) }, 201);
  });

  app.get('/deals/:id', guard(deps, 'deals:read'), (c) => {
    const auth = caller(c);
    return c.json({ data: dealView(auth.workspace, dealAt(auth.workspace, c.req.param('id'))) });
  });

  app.patch('/deals/:id', guard(deps, 'deals:write'), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const deal = dealAt(ws, c.req.param('id'));
    const b = await body(c, DealPatch);
    const pipeline = ws.pipelines.find((p) => p.id === deal.pipelineId)!;
    const stage = b.stage_id !== undefined ? pipeline.stages.find((s) => s.id === b.stage_id) : undefined;
    if (b.stage_id !== undefined && !stage) throw invalid('stage_id', "must be a stage of the deal's own pipeline");
    checkOwner(ws, b.owner_id);
    const now = state.now();
    if (b.name !== undefined) deal.name = b.name;
    if (b.amount !== undefined) deal.amountCents = toCents(b.amount ?? 0);
    if (b.source !== undefined) deal.source = b.source;
    if (b.owner_id !== undefined) deal.ownerId = b.owner_id;
    if (b.close_date !== undefined) deal.closeDate = b.close_date;
    if (stage) applyStage(deal, stage, now);
    if (b.closed_lost_reason !== undefined) deal.closedLostReason = b.closed_lost_reason;
    return c.json({ data: dealView(ws, deal) });
  });
  return app;
}
