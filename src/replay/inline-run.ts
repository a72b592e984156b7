import { apiClients } from '../clients/index.js';
import type { CallEvent } from '../api/index.js';
import type { WorkspaceEvent } from '../events/index.js';
import type { Handler, HandlerContext } from '../handler/index.js';
import type { Logger } from '../log/index.js';
import type { HandlerJobData } from '../queue/index.js';
import { runHandler, runWorkspace, type RunOutcome, type StepStore } from '../worker/index.js';

// One handler run in this process, as the worker runs it: used by `replay --inline`
// (./inline.ts, which re-exports these) and by switchyard/testing.

/** The `handlers` job of one handler for one validated event, as fan-out makes it. */
export function inlineJob(handler: Handler, key: string, event: WorkspaceEvent, receivedAt: string): HandlerJobData {
  return {
    key,
    handlerId: handler.id,
    receivedAt,
    event: { id: event.id, name: event.name, createdAt: event.createdAt, data: event.data },
  };
}

/** What {@link runInline} needs besides the handler and its job. */
export interface InlineRunDeps {
  /** The API (its own fetch); undefined: a handler that calls it fails as the worker's would without WORKSPACE_API_URL. */
  api: { baseUrl: string; token: string; burst: number; fetch: typeof fetch } | undefined;
  steps: StepStore;
  log: Logger;
  settings: Readonly<Record<string, unknown>>;
  signal: AbortSignal;
  /** `ctx.delivery.attempt` (default 1). */
  attempt?: number;
  /** The handler's `retry.attempts`: a retryable failure on the last one is `dead`, as in the worker. Unset: no attempt is the last. */
  attempts?: number;
  /** `ctx.delivery.source` (default the job's `source`, else `webhook`); `schedule` for a schedule's run. */
  source?: HandlerContext['delivery']['source'];
  /** Each API call as it is made (besides the returned list). */
  onCall?: (call: CallEvent) => void;
  /** `ctx.workspace.id` (default `default`, the workspace of a deployment of one). */
  workspace?: string | undefined;
}

/**
 * Runs one handler on one job in this process with the worker's own runner
 * (runHandler: its context, its Idempotency-Keys, its timeout and failure
 * classification), with a per-run API client whose calls are recorded.
 * Used by `replay --inline` and by switchyard/testing's testHandler.
 */
export async function runInline(
  handler: Handler,
  job: HandlerJobData,
  deps: InlineRunDeps,
): Promise<{ outcome: RunOutcome; calls: CallEvent[] }> {
  const calls: CallEvent[] = [];
  const { api } = deps;
  const outcome = await runHandler(handler, job, {
    api: api
      ? (keys) =>
          apiClients({
            ...api,
            onCall: (c) => {
              calls.push(c);
              deps.onCall?.(c);
            },
            log: deps.log,
          })({ keys })
      : undefined,
    steps: deps.steps,
    log: deps.log,
    settings: deps.settings,
    signal: deps.signal,
    delivery: { key: job.key, receivedAt: job.receivedAt, attempt: deps.attempt ?? 1, source: deps.source ?? job.source ?? 'webhook' },
    attempts: deps.attempts,
    workspace: runWorkspace(deps.workspace),
  });
  return { outcome, calls };
}
