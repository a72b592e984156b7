/** Helper module (no handler): the runs of this set's handlers, kept on globalThis so the in-process test reads them. */
export interface PolledRun {
  readonly handler: string;
  readonly key: string;
  readonly id: number;
  readonly status?: string;
  readonly previous?: string;
}

const holder = globalThis as { __polledRuns?: PolledRun[] };

export function polledRuns(): PolledRun[] {
  holder.__polledRuns ??= [];
  return holder.__polledRuns;
}
