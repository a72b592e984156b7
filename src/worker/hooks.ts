import type { CallEvent } from '../api/transport.js';
import type { RunOutcome } from './runner.js';

type RunOutcomeKind = Exclude<RunOutcome, { ok: true }>['verdict']['kind'];

/** Observers of the worker (metrics); every callback is optional. */
export interface WorkerHooks {
  onHandler?: (report: { handler: string; event: string; outcome: 'completed' | RunOutcomeKind; ms: number }) => void;
  onApiCall?: (event: CallEvent) => void;
  onPause?: (reason: string | null) => void;
}
