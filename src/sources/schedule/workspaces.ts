import { DEFAULT_WORKSPACE, type Config } from '../../config/index.js';
import { checkScheduleWorkspaces, type Schedule } from '../../handler/index.js';

/**
 * Refuses (HandlerDefinitionError) a schedule whose `workspaces` names a workspace the deployment of
 * `config` does not serve: a deployment of one serves `default` only. Run at start-up, before any timer.
 */
export function checkSchedulesFor(
  config: Pick<Config, 'workspaces' | 'workspacesFile'>,
  schedules: readonly Pick<Schedule, 'id' | 'workspaces'>[],
): void {
  const ids = config.workspaces?.map((w) => w.id) ?? [DEFAULT_WORKSPACE];
  const where = config.workspaces ? `WORKSPACES_FILE ${config.workspacesFile ?? ''}`.trim() : 'a deployment of one, no WORKSPACES_FILE';
  checkScheduleWorkspaces(schedules, ids, where);
}
