import type { IdSequence } from '../ids.js';
import type { Product, Variant, Workspace } from '../types.js';

type VariantInput = Omit<Variant, 'id' | 'reserved' | 'isActive'> & { isActive?: boolean };

/** Stores a product; `onHand` null means stock is not tracked (spec: available null). */
export function addProduct(
  ws: Workspace,
  ids: IdSequence,
  now: number,
  p: Omit<Product, 'id' | 'reserved' | 'variants' | 'createdAt' | 'imageUrl' | 'description'> & {
    description?: string | null;
    variants?: VariantInput[];
  },
): Product {
  const product: Product = {
    id: ids.take(),
    name: p.name,
    description: p.description ?? null,
    sku: p.sku,
    priceCents: p.priceCents,
    isActive: p.isActive,
    trackStock: p.trackStock,
    onHand: p.trackStock ? (p.onHand ?? 0) : null,
    reserved: 0,
    imageUrl: null,
    createdAt: now,
    variants: (p.variants ?? []).map((v) => ({
      ...v,
      id: ids.take(),
      isActive: v.isActive ?? true,
      reserved: 0,
      onHand: p.trackStock ? (v.onHand ?? 0) : null,
    })),
  };
  ws.products.set(product.id, product);
  return product;
}

/**
 * The seeded catalogue: a tracked product with variants (T-shirt, one size
 * nearly sold out), a tracked plain product (Mug), an untracked product with
 * variants (Poster), an untracked plain product (Gift card), an inactive one.
 */
export function seedCatalogue(ws: Workspace, ids: IdSequence, now: number): void {
  addProduct(ws, ids, now - 90 * 864e5, {
    name: 'T-shirt',
    sku: 'TSHIRT',
    priceCents: 2500,
    isActive: true,
    trackStock: true,
    onHand: null,
    description: 'Cotton T-shirt',
    variants: [
      { name: 'Small', options: { size: 'S' }, sku: 'TSHIRT-S', priceCents: 2500, onHand: 5 },
      { name: 'Medium', options: { size: 'M' }, sku: 'TSHIRT-M', priceCents: 2500, onHand: 2 },
    ],
  });
  addProduct(ws, ids, now - 80 * 864e5, { name: 'Mug', sku: 'MUG', priceCents: 1250, isActive: true, trackStock: true, onHand: 10 });
  addProduct(ws, ids, now - 70 * 864e5, {
    name: 'Poster',
    sku: 'POSTER',
    priceCents: 1000,
    isActive: true,
    trackStock: false,
    onHand: null,
    variants: [
      { name: 'A3', options: { format: 'A3' }, sku: 'POSTER-A3', priceCents: 1000, onHand: null },
      { name: 'A2', options: { format: 'A2' }, sku: 'POSTER-A2', priceCents: 1500, onHand: null },
    ],
  });
  addProduct(ws, ids, now - 60 * 864e5, {
    name: 'Gift card',
    sku: 'GIFT',
    priceCents: 5000,
    isActive: true,
    trackStock: false,
    onHand: null,
  });
  addProduct(ws, ids, now - 50 * 864e5, { name: 'Old cap', sku: 'CAP-OLD', priceCents: 900, isActive: false, trackStock: true, onHand: 3 });
}
