import type { Hono } from 'hono';
import type { Logger } from '../log/index.js';
import { mountWebhook, type WebhookRouteDeps } from './webhook-route.js';

/** The webhook routes of a deployment of many workspaces (WORKSPACES_FILE). */
export interface WorkspaceRoutes {
  /** WEBHOOK_PATH: the bare path, answered 404 saying to add the workspace id. */
  readonly base: string;
  /** Each workspace's route (`<base>/<id>`), verified with that workspace's secrets only, stored under its prefix. */
  readonly routes: readonly { readonly path: string; readonly route: WebhookRouteDeps }[];
}

/** The longest id echoed back in an answer (ids are at most 40 characters). */
const ECHO_MAX = 40;

/**
 * `POST <base>/<id>` for each workspace, then the misses: the bare `<base>` (a sender set up for a deployment of
 * one) and an id no workspace has, both 404 with what to use instead. The answers never list the ids: whoever
 * can reach the receiver must not learn which workspaces it serves.
 */
export function mountWorkspaceRoutes(app: Hono, ws: WorkspaceRoutes, log: Logger): void {
  const base = ws.base.replace(/\/+$/, '');
  for (const r of ws.routes) mountWebhook(app, r.path, r.route);
  app.all(base, (c) => {
    // Said like the route's other refusals, so a sender still set up for one workspace shows in the log.
    log.warn({ outcome: 'no_workspace', reason: 'workspace_required' }, 'delivery refused');
    return c.json(
      {
        status: 'rejected',
        error: 'workspace_required',
        message: `this deployment serves many workspaces: send each workspace's webhooks to ${base}/<id>, the id of that workspace`,
      },
      404,
    );
  });
  app.all(`${base}/:id`, (c) => {
    const id = c.req.param('id');
    const shown = id.length > ECHO_MAX ? `${id.slice(0, ECHO_MAX)}…` : id;
    log.warn({ outcome: 'no_workspace', reason: 'unknown_workspace', workspace: shown }, 'delivery refused');
    return c.json(
      {
        status: 'rejected',
        error: 'unknown_workspace',
        message: `no workspace of this deployment has the id "${shown}"; expected ${base}/<id> with the id of a workspace in its WORKSPACES_FILE`,
      },
      404,
    );
  });
}
