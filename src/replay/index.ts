export { readInputs, expandInputs, itemsFromFile, itemFromText, InputError, type ReplayItem } from './inputs.js';
export { filterItems, parseSince, withNewId, freshId, type ReplayFilter } from './filter.js';
export { httpTarget, directTarget, type ReplayTarget, type ReplayOutcome, type ReplayOutcomeKind } from './targets.js';
export { inlineTarget, describeCall, type InlineOptions, type DryWriteReport } from './inline.js';
export {
  createDryRun,
  describeDryWrite,
  printableBody,
  DRY_RUN_HEADER,
  type DryRun,
  type DryRunOptions,
  type DryWrite,
} from './dry-run.js';
export { runReplay, replayFailed, formatSummary, lineReporter, progressReporter, type ReplaySummary, type ReplayReporter } from './run.js';
export { buildDelivery, applySet, parseSetValue, defaultEnvelope, BuildError, type BuiltDelivery } from './build.js';
export { FIXTURES_DIR } from './build.js';
export { inlineJob, runInline, type InlineRunDeps } from './inline.js';
