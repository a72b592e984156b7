import { z } from 'zod';
import { DecimalString, Id, Timestamp } from './common.js';

export const ProductVariant = z.looseObject({
  id: Id,
  name: z.string(),
  options: z.record(z.string(), z.string()),
  sku: z.string(),
  price: DecimalString,
  /** Null when stock is not tracked. */
  available: z.number().int().nullable(),
  is_active: z.boolean(),
});
export type ProductVariant = z.infer<typeof ProductVariant>;

/** Catalogue product (read-only over the API). */
export const Product = z.looseObject({
  id: Id,
  name: z.string(),
  description: z.string().nullable(),
  sku: z.string(),
  price: DecimalString,
  is_active: z.boolean(),
  track_stock: z.boolean(),
  available: z.number().int().nullable(),
  image_url: z.string().nullable(),
  variants: z.array(ProductVariant),
  created_at: Timestamp,
});
export type Product = z.infer<typeof Product>;
