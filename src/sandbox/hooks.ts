import { Hono } from 'hono';
import type { Deps } from './context.js';
import { controlHooks } from './hooks/control.js';
import { worldHooks } from './hooks/world.js';

/** Index of the hooks, answered by `GET /_sandbox`. Full descriptions: docs/sandbox.md. */
export const HOOKS = [
  'GET /_sandbox/tokens',
  'GET /_sandbox/workspaces',
  'GET /_sandbox/requests?method=&path=&status=&token=&idempotency_key=',
  'DELETE /_sandbox/requests',
  'GET /_sandbox/faults',
  'POST /_sandbox/faults',
  'DELETE /_sandbox/faults',
  'DELETE /_sandbox/faults/{id}',
  'POST /_sandbox/reset',
  'GET /_sandbox/clock',
  'POST /_sandbox/clock',
  'POST /_sandbox/legacy-retirement',
  'POST /_sandbox/tls',
  'POST /_sandbox/burst',
  'POST /_sandbox/quota',
  'POST /_sandbox/inbound',
  'POST /_sandbox/leads/{id}/outcome',
  'GET /_sandbox/events?workspace=',
  'DELETE /_sandbox/events',
  'GET /_sandbox/deliveries?workspace=',
  'POST /_sandbox/events/redeliver',
  'GET /_sandbox/webhook?workspace=',
  'GET /_sandbox/webhooks',
  'POST /_sandbox/webhook',
] as const;

/**
 * Test hooks under /_sandbox (no authentication: the sandbox binds loopback).
 * They are not part of the simulated API and are never rate limited or logged.
 */
export function hookRoutes(deps: Deps): Hono {
  const app = new Hono();
  app.get('/', (c) => c.json({ data: HOOKS }));
  app.route('/', controlHooks(deps));
  app.route('/', worldHooks(deps));
  return app;
}
