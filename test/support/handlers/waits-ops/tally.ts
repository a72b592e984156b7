/** What the waits-ops handlers did, per run (`globalThis.__syOps`, in-process tests only): how often each went past its sleep or wait, and what a wait returned. */
export type OpsEntry = { after: number; got: string[] };
const g = globalThis as { __syOps?: Map<string, OpsEntry> };

export function opsTally(id: string): OpsEntry {
  const t = (g.__syOps ??= new Map<string, OpsEntry>());
  let e = t.get(id);
  if (!e) {
    e = { after: 0, got: [] };
    t.set(id, e);
  }
  return e;
}
