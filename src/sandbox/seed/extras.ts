import { z } from 'zod';
import { addContact } from '../domain/records.js';
import type { IdSequence } from '../ids.js';
import { Amount, toCents } from '../money.js';
import type { Workspace } from '../types.js';
import { addProduct } from './catalogue.js';

/**
 * Shape of a `--seed FILE` (JSON): extra contacts and products added to the
 * first workspace on top of the built-in seed. Labels and stages are named.
 */
export const SeedExtras = z.object({
  contacts: z
    .array(
      z.object({
        name: z.string().min(1).max(255),
        email: z.email().nullable().optional(),
        phone: z.string().max(32).nullable().optional(),
        labels: z.array(z.string()).optional(),
        lifecycle_stage: z.string().optional(),
      }),
    )
    .optional(),
  products: z
    .array(
      z.object({
        name: z.string().min(1),
        sku: z.string().min(1),
        price: Amount,
        track_stock: z.boolean().optional(),
        available: z.number().int().optional(),
        is_active: z.boolean().optional(),
        variants: z
          .array(
            z.object({
              name: z.string(),
              sku: z.string(),
              price: Amount,
              available: z.number().int().optional(),
              options: z.record(z.string(), z.string()).optional(),
            }),
          )
          .optional(),
      }),
    )
    .optional(),
});
export type SeedExtras = z.infer<typeof SeedExtras>;

/** Applies a seed file's records; unknown label or stage names are an error (the file is wrong). */
export function applyExtras(ws: Workspace, ids: IdSequence, now: number, extras: SeedExtras): void {
  for (const c of extras.contacts ?? []) {
    const labelIds = (c.labels ?? []).map((name) => {
      const label = ws.labels.find((l) => l.name === name);
      if (!label) throw new Error(`seed: unknown label "${name}"`);
      return label.id;
    });
    const stage = c.lifecycle_stage === undefined ? undefined : ws.stages.find((s) => s.name === c.lifecycle_stage);
    if (c.lifecycle_stage !== undefined && !stage) throw new Error(`seed: unknown lifecycle stage "${c.lifecycle_stage}"`);
    addContact(ws, ids.take(), now, {
      name: c.name,
      email: c.email ?? null,
      phone: c.phone ?? null,
      labelIds,
      ...(stage ? { lifecycleStageId: stage.id } : {}),
    });
  }
  for (const p of extras.products ?? []) {
    const track = p.track_stock ?? false;
    addProduct(ws, ids, now, {
      name: p.name,
      sku: p.sku,
      priceCents: toCents(p.price),
      isActive: p.is_active ?? true,
      trackStock: track,
      onHand: track ? (p.available ?? 0) : null,
      variants: (p.variants ?? []).map((v) => ({
        name: v.name,
        sku: v.sku,
        priceCents: toCents(v.price),
        options: v.options ?? {},
        onHand: track ? (v.available ?? 0) : null,
      })),
    });
  }
}
