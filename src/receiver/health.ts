import type { Hono } from 'hono';

/** Reports whether the durable path can take a delivery right now. */
export interface ReadinessProbe {
  (): Promise<{ ready: boolean; details: Record<string, unknown> }>;
}

/** `GET /healthz`: the process is alive. `GET /readyz`: Redis reachable and writable (and spool state). */
export function mountHealth(app: Hono, readiness: ReadinessProbe): void {
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const r = await readiness().catch((err: unknown) => ({ ready: false, details: { error: String(err) } }));
    return c.json({ status: r.ready ? 'ready' : 'unavailable', ...r.details }, r.ready ? 200 : 503);
  });
}
