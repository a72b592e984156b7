import type { Paginator, PageQuery } from '../pagination.js';
import type { ApiPromise } from '../response.js';
import { MAX_CHARS } from '../../spec/index.js';
import { Deal, type DealStatus } from '../../spec/schemas/index.js';
import type { RequestOptions, WriteOptions } from '../transport.js';
import { check } from '../validate.js';
import { idPath, listing, one, paged, type ResourceContext } from './shared.js';

export interface DealListQuery extends PageQuery {
  status?: DealStatus;
  contact_id?: number;
  pipeline_id?: number;
}

/** Body of `POST /deals`. Amounts are sent as numbers (responses carry decimal strings). */
export interface DealCreate {
  /** Required, at most 255. */
  name: string;
  /** Must belong to the workspace (else 422). */
  contact_id?: number | null;
  /** 0 or more. */
  amount?: number | null;
  /** Defaults to `other`. */
  source?: string | null;
  pipeline_id?: number | null;
  stage_id?: number | null;
  owner_id?: number | null;
  /** `YYYY-MM-DD`. */
  close_date?: string | null;
}

/** Body of `PATCH /deals/{id}`; moving `stage_id` to the Won/Lost stage is how a deal is won or lost. */
export interface DealPatch {
  name?: string;
  amount?: number | null;
  source?: string;
  owner_id?: number | null;
  close_date?: string | null;
  stage_id?: number;
  /** At most 255. */
  closed_lost_reason?: string | null;
}

interface DealFields {
  name?: string;
  amount?: number | null;
  close_date?: string | null;
  closed_lost_reason?: string | null;
  contact_id?: number | null;
  pipeline_id?: number | null;
  stage_id?: number | null;
  owner_id?: number | null;
}

function checkDeal(op: string, b: DealFields, create: boolean): void {
  const c = check(op);
  if (create) c.required('name', b.name, MAX_CHARS.dealName);
  else if (b.name !== undefined) c.required('name', b.name, MAX_CHARS.dealName);
  c.amount('amount', b.amount)
    .date('close_date', b.close_date)
    .maxLen('closed_lost_reason', b.closed_lost_reason, MAX_CHARS.closedLostReason)
    .int('contact_id', b.contact_id, 1)
    .int('pipeline_id', b.pipeline_id, 1)
    .int('stage_id', b.stage_id, 1)
    .int('owner_id', b.owner_id, 1);
}

export function dealsResource(ctx: ResourceContext) {
  const { transport: t } = ctx;
  return {
    /** `GET /deals`. */
    list(query: DealListQuery = {}, options?: RequestOptions): Paginator<Deal> {
      return listing(ctx, 'deals.list', '/deals', paged(Deal), { ...query }, options);
    },
    /** `GET /deals/{id}`. */
    get(id: number, options?: RequestOptions): ApiPromise<Deal> {
      return t.request({
        op: 'deals.get',
        method: 'GET',
        path: `/deals/${idPath('deals.get', 'id', id)}`,
        schema: one(Deal),
        repeat: 'safe',
        options,
      });
    },
    /** `POST /deals` (IK). */
    create(body: DealCreate, options?: WriteOptions): ApiPromise<Deal> {
      checkDeal('deals.create', body, true);
      return t.request({ op: 'deals.create', method: 'POST', path: '/deals', body, schema: one(Deal), repeat: 'ik', options });
    },
    /** `PATCH /deals/{id}` (IK). */
    update(id: number, body: DealPatch, options?: WriteOptions): ApiPromise<Deal> {
      checkDeal('deals.update', body, false);
      return t.request({
        op: 'deals.update',
        method: 'PATCH',
        path: `/deals/${idPath('deals.update', 'id', id)}`,
        body,
        schema: one(Deal),
        repeat: 'ik',
        options,
      });
    },
  };
}

export type DealsResource = ReturnType<typeof dealsResource>;
