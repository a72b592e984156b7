import { Hono } from 'hono';
import { z } from 'zod';
import { PER_PAGE } from '../../spec/index.js';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { phoneUse } from '../domain/phone-use.js';
import { compileMatch } from '../domain/segments.js';
import { notFound } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { newestFirst, paginate } from '../pagination.js';
import { body, strictBody } from '../validation.js';
import { contactView, parseInclude } from '../views/contacts.js';

const Rule = strictBody({ attribute: z.string(), operator: z.string(), value: z.unknown().optional() });

/** Spec, POST /contacts/search body (all optional; per_page 1 to 100). */
const SearchBody = strictBody({
  search: z.string().nullable().optional(),
  match: z.array(z.array(Rule)).nullable().optional(),
  segment_id: z.number().int().nullable().optional(),
  per_page: z.number().int().min(PER_PAGE.min).max(PER_PAGE.max).optional(),
});

/**
 * Search by rule groups (spec: POST /contacts/search). A read: needs
 * contacts:read and ignores Idempotency-Key. `segment_id` takes precedence
 * over `match`; an unknown segment answers 404.
 */
export function contactSearchRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  app.post('/contacts/search', guard(deps, 'contacts:read', phoneUse.rules), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const q = await body(c, SearchBody);
    let groups = q.match ?? [];
    if (q.segment_id !== undefined && q.segment_id !== null) {
      const segment = ws.segments.find((s) => s.id === q.segment_id);
      if (!segment) throw notFound('Segment');
      groups = segment.match;
    }
    const matches = compileMatch(ws, auth, groups, deps.state.now(), q.segment_id ? 'segment' : 'match');
    const s = q.search?.toLowerCase();
    const rows = [...ws.contacts.values()].filter(
      (x) =>
        matches(x) &&
        (!s ||
          x.name.toLowerCase().includes(s) ||
          (x.email?.toLowerCase().includes(s) ?? false) ||
          (auth.teammate.viewPhone && (x.phone?.includes(s) ?? false))),
    );
    const include = parseInclude(c.req.query('include'));
    return c.json(
      paginate(rows, newestFirst, (x) => contactView(ws, x, { include }), {
        perPage: q.per_page ?? PER_PAGE.default,
        cursor: c.req.query('cursor'),
      }),
    );
  });
  return app;
}
