import { Hono } from 'hono';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { guard } from '../middleware/guard.js';

/**
 * GET /me (spec: Account). The ability it needs is not shown; the call
 * touches no data and is recommended as the first call, so the sandbox lets
 * any valid token through.
 */
export function meRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  app.get('/me', guard(deps, null), (c) => {
    const { workspace: ws, teammate, token } = caller(c);
    return c.json({
      data: {
        user: { id: teammate.id, name: teammate.name, email: teammate.email },
        company: { ...ws.company },
        account: { ...ws.account },
        abilities: [...token.abilities],
      },
    });
  });
  return app;
}
