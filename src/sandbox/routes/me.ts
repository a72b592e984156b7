import { Hono } from 'hono';
import { caller, type Deps, type SandboxEnv } from '../context.js';

/**
 * GET /me (spec: Account). The ability it needs is not shown; the call
 * touches no data and is recommended as the first call, so the sandbox lets
 * any valid token through.
 */
export function meRoutes(_deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  app.get('/me', (c) => {
    const { workspace: ws, teammate, token } = caller(c, null);
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
