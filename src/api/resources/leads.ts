import { z } from 'zod';
import { Paginator } from '../pagination.js';
import type { ApiPromise } from '../response.js';
import { LEAD_OUTCOMES, type LeadOutcome } from '../../spec/index.js';
import { Lead } from '../../spec/schemas/index.js';
import type { RequestOptions } from '../transport.js';
import { check } from '../validate.js';
import { one, type ResourceContext } from './shared.js';

/** Query of `GET /leads` (older overview endpoint). */
export interface LeadListQuery {
  outcome?: LeadOutcome;
  contact_id?: number;
}

/** Body of `POST /leads`: `contact_id` and `name` required. */
export interface LeadCreate {
  contact_id: number;
  name: string;
  /** Sent as a number (responses carry a decimal string). */
  value?: number | null;
  source?: string | null;
}

/** The overview says "list of leads": accept `{data: [...]}` with or without cursor meta. */
const LeadPage = z
  .looseObject({
    data: z.array(Lead),
    meta: z.looseObject({ next_cursor: z.string().nullable().optional(), per_page: z.number().optional() }).optional(),
  })
  .transform((r) => ({ data: r.data, nextCursor: r.meta?.next_cursor ?? null, perPage: r.meta?.per_page ?? r.data.length }));

export function leadsResource(ctx: ResourceContext) {
  const { transport: t } = ctx;
  return {
    /** `GET /leads`. */
    list(query: LeadListQuery = {}, options?: RequestOptions): Paginator<Lead> {
      check('leads.list').oneOf('outcome', query.outcome, LEAD_OUTCOMES).int('contact_id', query.contact_id, 1);
      return new Paginator<Lead>((cursor) =>
        t.request({
          op: 'leads.list',
          method: 'GET',
          path: '/leads',
          query: { ...query, cursor },
          schema: LeadPage,
          repeat: 'safe',
          options,
        }),
      );
    },
    /**
     * `POST /leads`: opens a lead. The API spec gives this endpoint no
     * Idempotency-Key, so the call is never repeated by the client (a repeat
     * could open two leads) and no key is sent, whatever the caller passes: a
     * timeout, lost connection or 5xx is an {@link import('../errors.js').OutcomeUnknownError} for a
     * person to check. A caller-supplied `idempotencyKey` is ignored with a warning.
     */
    create(body: LeadCreate, options?: RequestOptions): ApiPromise<Lead> {
      const op = 'leads.create';
      check(op)
        .present('contact_id', body.contact_id, 'a contact id')
        .int('contact_id', body.contact_id, 1)
        .required('name', body.name, 255)
        .amount('value', body.value);
      return t.request({ op, method: 'POST', path: '/leads', body, schema: one(Lead), repeat: 'unsafe', options });
    },
  };
}

export type LeadsResource = ReturnType<typeof leadsResource>;
