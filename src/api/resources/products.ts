import type { Paginator, PageQuery } from '../pagination.js';
import type { ApiPromise } from '../response.js';
import { Product } from '../../spec/schemas/index.js';
import type { RequestOptions } from '../transport.js';
import { idPath, listing, one, paged, type ResourceContext } from './shared.js';

/** Query of `GET /products` (the spec names `active` and `search` without their types). */
export interface ProductListQuery extends PageQuery {
  active?: boolean;
  search?: string;
}

export function productsResource(ctx: ResourceContext) {
  return {
    /** `GET /products` with variants. */
    list(query: ProductListQuery = {}, options?: RequestOptions): Paginator<Product> {
      return listing(ctx, 'products.list', '/products', paged(Product), { ...query }, options);
    },
    /** `GET /products/{id}`. */
    get(id: number, options?: RequestOptions): ApiPromise<Product> {
      return ctx.transport.request({
        op: 'products.get',
        method: 'GET',
        path: `/products/${idPath('products.get', 'id', id)}`,
        schema: one(Product),
        repeat: 'safe',
        options,
      });
    },
  };
}

export type ProductsResource = ReturnType<typeof productsResource>;
