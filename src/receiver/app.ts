import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from '../log/index.js';
import { mountHealth, type ReadinessProbe } from './health.js';
import { mountWebhook, type WebhookRouteDeps } from './webhook-route.js';
import { mountWorkspaceRoutes, type WorkspaceRoutes } from './workspace-routes.js';

/** The webhook route of a deployment of one: `webhookPath` (WEBHOOK_PATH). */
export interface OneWebhookRoute extends WebhookRouteDeps {
  webhookPath: string;
}

/** The webhook routes of a deployment of many: `<base>/<id>` per workspace (src/receiver/workspace-routes.ts). */
export interface ManyWebhookRoutes {
  log: Logger;
  workspaces: WorkspaceRoutes;
}

export type ReceiverAppOptions = (OneWebhookRoute | ManyWebhookRoutes) & {
  readiness: ReadinessProbe;
  /** Mounts extra routes (metrics, admin) before the fallbacks. */
  extend?: (app: Hono) => void;
};

/**
 * The receiver's Hono app. Thin: the webhook route extracts bytes and headers
 * and calls verify / parseEnvelope / the sink; everything else is health,
 * fallbacks and an error answer that never shows internals.
 */
export function createReceiverApp(opts: ReceiverAppOptions): Hono {
  const app = new Hono();
  const log: Logger = opts.log;
  // The webhook routes are registered first.
  if ('workspaces' in opts) mountWorkspaceRoutes(app, opts.workspaces, log);
  else mountWebhook(app, opts.webhookPath, opts);
  mountHealth(app, opts.readiness);
  opts.extend?.(app);
  app.notFound((c) => c.json({ error: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((err, c) => {
    // Middleware answers (basic auth's 401, body limits) keep their status.
    if (err instanceof HTTPException) return err.getResponse();
    log.error({ err: String(err), path: c.req.path }, 'unexpected error');
    return c.json({ error: 'internal', message: 'unexpected error' }, 500);
  });
  return app;
}
