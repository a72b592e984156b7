/** Where the workflow fixtures record what they ran: `globalThis.__syWf` (in-process tests). */
type Entry = Record<string, unknown> & { h: string };
const g = globalThis as { __syWf?: Entry[]; __syWfHook?: (event: unknown) => void };

export function record(entry: Entry): void {
  (g.__syWf ??= []).push({ ...entry, t: Date.now() });
}

/** Lets a test act at a precise point of a run (the race test delivers the awaited event there). */
export function hook(event: unknown): void {
  g.__syWfHook?.(event);
}
