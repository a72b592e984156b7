import { DELIVERY_FILTER_HELP } from './deliveries.js';
import { workspaceHelp } from './flags.js';

/** `switchyard rerun --help`. */
export const HELP = `Usage: switchyard rerun --handler ID [filters] [--dry-run] [--yes] [--detach]
       switchyard rerun <delivery> --handler ID [--from-step NAME] [--set path=value]...
       switchyard rerun status [BATCH] [--json]
       switchyard rerun cancel BATCH

Runs a handler again on deliveries it already ran: after a bad deploy is fixed,
on the deliveries the bug touched. Each delivery runs as a NEW run, not a retry:
new Idempotency-Keys and steps (so it can write again), its own history, linked
to the original run's (\`switchyard trace\` shows "rerun of …, batch …").

First it prints a plan from the delivery history: deliveries per event, the API
calls their original runs made, and how long they take within the re-runs'
budget; then it asks (on a terminal; --yes skips the question; without a
terminal and without --yes it refuses). --dry-run stops after the plan.

The batch is kept in Redis: the selection is frozen when it starts, and the
workers feed its runs into the handlers-low queue a window at a time, each with
a job id of its own, so killing this command or a worker neither skips nor
doubles a delivery. Its runs take slots of their own API window, RERUN_SHARE
(default 0.5) of WORKSPACE_API_BURST, at low priority: live traffic keeps its
latency. This command follows the batch with a progress line; Ctrl-C stops
following only (the batch goes on).

Runs not run yet, or parked in a sleep or wait, are left out (they run anyway),
as are deliveries whose body is not kept. Needs REDIS_URL (and QUEUE_PREFIX)
like \`switchyard dlq\`, and the project's handler modules (HANDLERS_DIR).

Filters (every one given must hold; as \`switchyard deliveries\` has them):
  --handler ID           the handler to run again (required); it must handle the events selected
${DELIVERY_FILTER_HELP.split('\n')
  .filter((l) => l !== '' && !l.startsWith('  --handler'))
  .map((l) => l.replace(', or schedule (the runs of schedules)', ''))
  .join('\n')}
  --limit N              at most N deliveries, newest first (default 100000)
  Without --event: every event the handler handles. --outcome is the handler's latest state.

Options:
  --dry-run               print the plan; start nothing
  --yes, -y               start without asking
  --detach                start and return; do not follow the batch
  --json                  the plan (or status) as JSON
${workspaceHelp(26)}
One delivery (a key or job id as \`switchyard deliveries\` and \`trace\` show it):
  --from-step NAME        the steps before NAME return what they returned in the original run;
                          NAME and what follows run fresh (the run must have a step of that name)
  --set path=value        edit the event as \`switchyard send --set\` does (repeatable)

Batches:
  status [BATCH]          the batches kept (7 days after they end), or one: done/failed/total, ETA, failures
  cancel BATCH            no more runs are queued and those not started are removed; running ones finish

Examples:
  switchyard rerun --handler note-on-message --since 2025-03-04T09:00:00Z --outcome completed --dry-run
  switchyard rerun --handler note-on-message --event message.received --since 6h --yes
  switchyard rerun --handler refund-note --where 'data.body~refund' --since 2d --dry-run
  switchyard rerun status rr-mb2x9k1c-4f7a
  switchyard rerun evt_01HZX3 --handler lead-won-task --from-step create-task --set data.amount=1200
`;
