import { configuredApiClients } from '../clients/index.js';
import { workspaceConfigs, type Config } from '../config/index.js';
import { runsIn, type Handler, type Schedule } from '../handler/index.js';
import { chooseWorkspace } from './connect.js';
import { checkApi, checkParkedRuns, type Check } from './doctor-checks.js';

// The checks of `switchyard doctor` that are each workspace's own: its API token and abilities against the
// handlers, and the runs parked under its prefix. A deployment of one has one section, unnamed.

/** What the workspace checks need of the deployment's checks. */
export interface DoctorContext {
  readonly handlers: readonly Handler[];
  readonly schedules: readonly Schedule[];
  /** Every handler HANDLERS_DIR defines; undefined when it did not load (no parked-run check then). */
  readonly defined: readonly string[] | undefined;
  readonly redisUrl: string | null;
}

/** The workspaces to check: the one `--workspace` names, else every one of the deployment. */
export function doctorWorkspaces(config: Config, id: string | undefined): Config[] {
  return id === undefined ? workspaceConfigs(config) : [chooseWorkspace(config, id)];
}

/** One workspace's checks, each naming the workspace in a deployment of many. */
export async function workspaceChecks(config: Config, ctx: DoctorContext): Promise<Check[]> {
  const checks: Check[] = [];
  if (ctx.defined) checks.push(...(await checkParkedRuns(config, ctx.defined, ctx.redisUrl)));
  // A URL the client refuses (plain http to another host) is a failed check of the list, not an abort.
  let api;
  let refused: string | undefined;
  try {
    // A bare client (no shared limiter): one call, never retried.
    api = configuredApiClients(config, undefined, { retry: { maxAttempts: 1 } })?.();
  } catch (err) {
    refused = err instanceof Error ? err.message.replace(/^createApiClient: baseUrl/, 'WORKSPACE_API_URL') : String(err);
  }
  if (refused)
    checks.push({
      name: 'api',
      status: 'fail',
      detail: refused,
      fix: 'use the https URL of the workspace API (plain http only for a local sandbox on 127.0.0.1/localhost)',
    });
  // Only the schedules that run in this workspace (`defineSchedule({ workspaces })`) need its token's abilities.
  else
    checks.push(
      ...(await checkApi(
        config,
        ctx.handlers,
        api,
        ctx.schedules.filter((s) => runsIn(s, config.workspaceId)),
      )),
    );
  return config.workspaces ? checks.map((c) => ({ ...c, workspace: config.workspaceId })) : checks;
}
