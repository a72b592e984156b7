import { jobIdFor } from '../events/index.js';
import { NonRetriableError } from '../handler/index.js';
import type { HandlerJobData } from '../queue/index.js';
import type { StepStore } from './steps.js';

/**
 * A re-run from a step (`switchyard rerun --from-step NAME`): the steps the
 * original run completed before NAME return what they returned then (read from
 * the original run's scope), NAME and what follows run fresh in the re-run's
 * own scope. Checked before the handler runs: when the original never
 * completed NAME, or the results before it are gone, the run fails with a
 * {@link FromStepError} (dead-lettered, never retried, never run from the start).
 */

/** A re-run from a step that cannot be: the original never completed the step, or what came before it is gone. */
export class FromStepError extends NonRetriableError {
  readonly code = 'rerun_from_step';
  constructor(message: string) {
    super(message);
    this.name = 'FromStepError';
  }
}

/** Where the steps before the re-run's step are read from, and which they are. */
export interface FromStep {
  /** The original run's scope (`d/<key>/<handler>`, or an earlier re-run's `r/…`). */
  readonly scope: string;
  /** The step the re-run starts from. */
  readonly name: string;
  /** The steps the original completed before it. */
  readonly before: ReadonlySet<string>;
}

/** The plan of a re-run from a step (null for any other run), or a FromStepError saying why it cannot run. */
export async function fromStepPlan(steps: StepStore, job: HandlerJobData): Promise<FromStep | null> {
  const name = job.rerun?.fromStep;
  if (name === undefined) return null;
  // The original's scope: the run `of` names (a delivery's run, or an earlier re-run), else the delivery's run.
  const of = job.rerun?.of ?? '';
  const scope = /^[dr]\//.test(of) ? of : jobIdFor(job.key, job.handlerId);
  const what = `rerun from step "${name}" of ${scope}`;
  if (!steps.completed) throw new FromStepError(`${what}: this step store does not keep the order of a run's steps`);
  const done = await steps.completed(scope);
  const at = done.findIndex((s) => s.name === name);
  if (at < 0) {
    const ran =
      done.length === 0
        ? 'no step result is kept for it (it ran no ctx.step, or they expired with the history)'
        : `it completed ${done.map((s) => `"${s.name}"`).join(', ')}`;
    throw new FromStepError(`${what}: the original run never completed step "${name}" (${ran}); nothing was run`);
  }
  const before = done.slice(0, at).map((s) => s.name);
  const kept = steps.kept
    ? await steps.kept(scope, before)
    : await Promise.all(before.map(async (s) => (await steps.get(scope, s)) !== null));
  const gone = before.filter((_, i) => !kept[i]);
  if (gone.length > 0) {
    throw new FromStepError(
      `${what}: the results of ${gone.map((s) => `"${s}"`).join(', ')} from the original run are gone (expired); nothing was run`,
    );
  }
  return { scope, name, before: new Set(before) };
}
