import type { StepStore } from '../worker/index.js';

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
    },
  };
}
