import { Hono, type Context } from 'hono';
import type { Deps, SandboxEnv } from './context.js';
import { ApiError } from './errors.js';
import { hookRoutes } from './hooks.js';
import { authenticate } from './middleware/auth.js';
import { faultGate } from './middleware/faults.js';
import { rateLimit } from './middleware/limits.js';
import { requestLog, tlsGuard } from './middleware/log.js';
import { contactLifecycleRoutes } from './routes/contact-lifecycle.js';
import { contactMergeRoutes } from './routes/contact-merge.js';
import { contactSearchRoutes } from './routes/contact-search.js';
import { contactRoutes } from './routes/contacts.js';
import { conversationRoutes } from './routes/conversations.js';
import { dealRoutes } from './routes/deals.js';
import { leadRoutes } from './routes/leads.js';
import { meRoutes } from './routes/me.js';
import { messageRoutes } from './routes/messages.js';
import { orderRoutes } from './routes/orders.js';
import { productRoutes } from './routes/products.js';
import { taskRoutes } from './routes/tasks.js';
import { API_BASE, apiPath } from './paths.js';

export { API_BASE, apiPath } from './paths.js';

/**
 * Renders every failure: ApiError as `{message, code?, errors?}` with its
 * status; anything unexpected as a plain 500 with nothing about internals
 * (spec: Errors).
 */
export function renderError(err: Error, c: Context): Response {
  if (err instanceof ApiError) {
    return c.json(err.body(), err.status, err.headers ?? {});
  }
  return c.json({ message: 'Server Error' }, 500);
}

/**
 * The sandbox's Hono app: the API under /api/v1 behind the gate chain
 * (log -> TLS -> faults -> auth -> rate limit), then each route's own guard
 * (ability -> view-phone -> idempotency -> latency, phones masked on the way
 * out; see middleware/guard.ts), and the unauthenticated test hooks under /_sandbox.
 */
export function createApp(deps: Deps): Hono {
  const { state } = deps;
  const api = new Hono<SandboxEnv>();
  // Every answer's Date header is the sandbox's clock (moved by /_sandbox/clock), as a real server's is its own:
  // the poller reads the API's "now" from it (task.due).
  api.use('*', async (c, next) => {
    await next();
    c.res.headers.set('Date', new Date(state.now()).toUTCString());
  });
  api.use('*', requestLog(state, apiPath), tlsGuard(state), faultGate(state, apiPath), authenticate(state), rateLimit(state));
  for (const routes of [
    meRoutes,
    contactSearchRoutes,
    contactMergeRoutes,
    contactRoutes,
    contactLifecycleRoutes,
    conversationRoutes,
    messageRoutes,
    dealRoutes,
    orderRoutes,
    productRoutes,
    taskRoutes,
    leadRoutes,
  ]) {
    api.route('/', routes(deps));
  }
  api.onError(renderError);

  const app = new Hono();
  app.route(API_BASE, api);
  app.route('/_sandbox', hookRoutes(deps));
  app.notFound((c) => c.json({ message: 'Not found.' }, 404));
  app.onError(renderError);
  return app;
}
