import { DEFAULT_WORKSPACE, WORKSPACE_ID } from '../config/index.js';

/**
 * `options.workspace` of testHandler and testSchedule: the run's `ctx.workspace.id`
 * (default `default`, the workspace of a deployment of one), or a TypeError naming what is expected.
 */
export function workspaceOption(who: string, value: unknown): string {
  if (value === undefined) return DEFAULT_WORKSPACE;
  if (typeof value !== 'string' || !WORKSPACE_ID.test(value)) {
    throw new TypeError(
      `${who}: workspace must be a workspace id as in WORKSPACES_FILE (lower-case letters, digits and dashes, e.g. 'acme'), got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
