import type { CompletedStep, StepStore } from '../worker/index.js';

/** One `ctx.step` of a run: its name, its stored result, and whether it came from the store (done by an earlier run) instead of running. */
export interface StepRecord {
  readonly name: string;
  readonly result: unknown;
  readonly reused: boolean;
}

/**
 * `store` as the runner sees it, noting each step of this run in order:
 * a stored result found (`reused`) or a result stored now.
 */
export function recordingSteps(store: StepStore): { store: StepStore; steps: StepRecord[] } {
  const steps: StepRecord[] = [];
  const value = (json: string): unknown => (JSON.parse(json) as { v?: unknown }).v;
  return {
    steps,
    store: {
      async get(scope, step) {
        const json = await store.get(scope, step);
        if (json !== null) steps.push({ name: step, result: value(json), reused: true });
        return json;
      },
      async set(scope, step, json) {
        await store.set(scope, step, json);
        steps.push({ name: step, result: value(json), reused: false });
      },
      ...(store.completed ? { completed: store.completed.bind(store) } : {}),
      ...(store.kept ? { kept: store.kept.bind(store) } : {}),
    },
  };
}

/**
 * `store` with an original run (`scope`) that completed the steps of `previous` in order, returning its values,
 * then `fromStep`: what a re-run from that step reads (testHandler's `fromStep` and `previous`). Nothing is written
 * to `store` for it.
 */
export function previousSteps(store: StepStore, scope: string, fromStep: string, previous: Readonly<Record<string, unknown>>): StepStore {
  const names = Object.keys(previous);
  const order: CompletedStep[] = [...names, fromStep].map((name) => ({ name, completedAt: 0 }));
  return {
    get: async (s, step) => (s === scope && Object.hasOwn(previous, step) ? JSON.stringify({ v: previous[step] }) : store.get(s, step)),
    set: (s, step, json) => store.set(s, step, json),
    completed: async (s) => (s === scope ? order : ((await store.completed?.(s)) ?? [])),
    kept: async (s, steps) =>
      s === scope
        ? steps.map((step) => Object.hasOwn(previous, step))
        : store.kept
          ? store.kept(s, steps)
          : Promise.all(steps.map(async (step) => (await store.get(s, step)) !== null)),
  };
}
