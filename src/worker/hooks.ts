import type { CallEvent } from '../api/transport.js';
import type { RunOutcome } from './runner.js';

type RunOutcomeKind = Exclude<RunOutcome, { ok: true }>['verdict']['kind'];

/** Observers of the worker (metrics); every callback is optional. */
export interface WorkerHooks {
  onHandler?: (report: { handler: string; event: string; outcome: 'completed' | RunOutcomeKind; ms: number }) => void;
  onApiCall?: (event: CallEvent) => void;
  onPause?: (reason: string | null) => void;
  /** A worker started a handler job that had waited `waitMs` in the queue of its priority since it could run. */
  onStart?: (report: { handler: string; priority: string; waitMs: number }) => void;
  /** A run completed without running its handler (maxAge, skipStale, …). */
  onSkipped?: (report: { handler: string; event: string; reason: string }) => void;
  /** A debounced run took its burst: `folded` events were folded into the one it runs. */
  onDebounced?: (report: { handler: string; folded: number }) => void;
  /** A valid delivery was fanned out (`duplicate`: another delivery of its change ran, so no handler runs). */
  onDispatched?: (report: { event: string; source: string; duplicate: boolean }) => void;
}
