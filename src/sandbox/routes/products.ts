import { Hono } from 'hono';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { invalid } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { newestFirst, paginate, perPage } from '../pagination.js';
import { recordAt } from '../validation.js';
import { productView } from '../views/commerce.js';

/**
 * The product catalogue, read-only (spec: Products). `active` is a boolean
 * (`true`/`false`/`1`/`0`); `search` matches name or sku, case-insensitive
 * (types not shown beyond their names).
 */
export function productRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();

  app.get('/products', guard(deps, 'products:read'), (c) => {
    const auth = caller(c);
    const q = c.req.query();
    let active: boolean | undefined;
    if (q.active !== undefined && q.active !== '') {
      if (!['true', 'false', '1', '0'].includes(q.active)) throw invalid('active', 'must be true or false');
      active = q.active === 'true' || q.active === '1';
    }
    const s = q.search?.toLowerCase();
    const rows = [...auth.workspace.products.values()].filter(
      (p) =>
        (active === undefined || p.isActive === active) &&
        (!s ||
          p.name.toLowerCase().includes(s) ||
          p.sku.toLowerCase().includes(s) ||
          p.variants.some((v) => v.sku.toLowerCase().includes(s))),
    );
    return c.json(paginate(rows, newestFirst, productView, { perPage: perPage(q.per_page), cursor: q.cursor }));
  });

  app.get('/products/:id', guard(deps, 'products:read'), (c) => {
    const auth = caller(c);
    const product = recordAt(auth.workspace.products, c.req.param('id'), 'Product');
    return c.json({ data: productView(product) });
  });
  return app;
}
