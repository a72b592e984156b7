import { Hono } from 'hono';
import type { Metrics } from './create.js';

/**
 * The HTTP app of a process without a receiver (`switchyard work`): `GET /metrics`
 * and `GET /healthz`. Serve it on `METRICS_PORT`, bound like the receiver.
 */
export function createMetricsApp(metrics: Metrics): Hono {
  const app = new Hono();
  metrics.mount(app);
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.notFound((c) => c.json({ error: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` }, 404));
  return app;
}
