import type { Context, MiddlewareHandler } from 'hono';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';

/**
 * Writes from another site are refused. Basic auth is sent by the browser with every request to this
 * origin, also a form another site posts here, so a write (every method but GET, HEAD, OPTIONS) must come
 * from a page of this origin: hono's `csrf` accepts it when the browser says so (`Sec-Fetch-Site:
 * same-origin`) or when its `Origin` names this host. The host is compared, not the scheme: behind a
 * proxy that ends TLS, the request reaches us as http while the page was https. Requests that are not
 * forms (JSON: bull-board's actions) need a CORS preflight from another site, which the admin never
 * allows, so the browser does not send them.
 */
export function sameOriginWrites(): MiddlewareHandler {
  const check = csrf({ origin: (origin, c) => sameHost(origin, c) });
  return async (c, next) => {
    let allowed = false;
    try {
      await check(c, async () => {
        allowed = true;
      });
    } catch (err) {
      if (!(err instanceof HTTPException)) throw err;
    }
    // Answered here like basicAuth's 401: the receiver's onError maps every thrown error to 500.
    if (!allowed) return c.text(REFUSED, 403);
    await next();
  };
}

const REFUSED = 'Refused: a change to the admin must be sent from one of its own pages; this request came from another site.\n';

function sameHost(origin: string, c: Context): boolean {
  try {
    const host = c.req.header('host') ?? new URL(c.req.url).host;
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
