import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from '../log/index.js';
import { mountHealth, type ReadinessProbe } from './health.js';
import { webhookHandler, type WebhookRouteDeps } from './webhook-route.js';

export interface ReceiverAppOptions extends WebhookRouteDeps {
  webhookPath: string;
  readiness: ReadinessProbe;
  /** Mounts extra routes (metrics, admin) before the fallbacks. */
  extend?: (app: Hono) => void;
}

/**
 * The receiver's Hono app. Thin: the webhook route extracts bytes and headers
 * and calls verify / parseEnvelope / the sink; everything else is health,
 * fallbacks and an error answer that never shows internals.
 */
export function createReceiverApp(opts: ReceiverAppOptions): Hono {
  const app = new Hono();
  const log: Logger = opts.log;
  // One route for every method of the webhook path, registered first: a POST
  // matches exactly one handler, which Hono runs without composing a chain.
  // With an ingest stream (opts.ingest), the route emits its request's events (received, storing, stored, answered).
  const webhook = webhookHandler(opts);
  app.all(opts.webhookPath, (c) => {
    if (c.req.method === 'POST') return webhook(c);
    c.header('Allow', 'POST');
    return c.json({ status: 'rejected', error: 'method_not_allowed', message: `use POST for ${opts.webhookPath}` }, 405);
  });
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
