import type { Queue } from 'bullmq';
import type { Hono, MiddlewareHandler } from 'hono';
import { basicAuth } from 'hono/basic-auth';
import { HTTPException } from 'hono/http-exception';
import { boardApp, historyLinks } from './board.js';
import type { HistorySource } from './page.js';
import { mountPages, type AdminWorkspace } from './pages.js';
import type { AdminRerun } from './rerun.js';
import type { WaitOps } from './waits-actions.js';
import { mountWorkspaces } from './workspaces.js';
import { selfOnly } from './offline.js';
import { sameOriginWrites } from './guard.js';

/** Dashboard credentials (`ADMIN_USER` / `ADMIN_PASSWORD`, i.e. `config.admin`). */
export interface AdminCredentials {
  readonly user: string;
  readonly password: string;
}

/** Options of {@link mountAdmin}. */
export interface AdminOptions {
  /** The queues shown on the board (every queue of Switchyard: `openQueues(…).all`). */
  queues: readonly Queue[];
  /** `config.admin`; undefined: nothing is mounted and `basePath` answers 404 like any unknown path. */
  admin: AdminCredentials | undefined;
  /** Where the board lives. Default `/admin`. */
  basePath?: string;
  /** Hide the board's write actions (retry, clean, pause, empty...). Default false: the operator may retry failed jobs. */
  readOnly?: boolean;
  /**
   * Where the delivery history is read (the queues' Redis connection and prefix): mounts the
   * deliveries view at `<basePath>/deliveries` and the waits view (runs parked in durable sleeps and
   * waits) at `<basePath>/waits` behind the same auth, linked from the board's header.
   * Undefined: the board only.
   */
  history?: HistorySource;
  /**
   * With `history`: the deliveries page can start a rerun of the deliveries it lists (plan, confirm, progress
   * at `<basePath>/reruns`) with the handlers loaded in this process. Undefined: the batches are listed and can
   * be cancelled, but none is started here.
   */
  rerun?: AdminRerun;
  /**
   * With `history`: the waits page has a Cancel and a Wake button per parked run (the handler queues, and where
   * each cancel and wake is recorded: the history's writer). Undefined: the page lists the runs only.
   */
  waits?: WaitOps;
  /**
   * A deployment of many (WORKSPACES_FILE): each workspace's pages (and a board of its own queues) under
   * `<basePath>/w/<id>`, chosen at `<basePath>/deliveries?workspace=<id>` (waits, reruns alike); the board at
   * `basePath` shows every workspace's queues as `<id> · <queue>`. `queues`, `history`, `rerun` and `waits`
   * are then unused.
   */
  workspaces?: readonly AdminWorkspace[];
}

/**
 * Mounts the bull-board dashboard at `basePath` behind HTTP basic auth (hono's
 * `basicAuth`, which compares in constant time). Mounts nothing when no
 * credentials are configured: the dashboard is off, not open.
 * Returns whether it was mounted.
 */
export function mountAdmin(app: Hono, opts: AdminOptions): boolean {
  if (!opts.admin) return false;
  const basePath = (opts.basePath ?? '/admin').replace(/\/+$/, '') || '/admin';
  const check = basicAuth({ username: opts.admin.user, password: opts.admin.password, realm: 'Switchyard admin' });
  // basicAuth throws its 401 as an HTTPException; answer it here so a host app whose
  // onError maps every error to 500 (the receiver's does) still sends the challenge.
  const auth: MiddlewareHandler = async (c, next) => {
    try {
      return await check(c, next);
    } catch (err) {
      if (err instanceof HTTPException) return err.getResponse();
      throw err;
    }
  };
  app.use(basePath, auth);
  app.use(`${basePath}/*`, auth);
  // After the login: a form another site posts here carries the login too (src/admin/guard.ts).
  app.use(basePath, sameOriginWrites());
  app.use(`${basePath}/*`, sameOriginWrites());
  app.use(`${basePath}/*`, async (c, next) => {
    await next();
    // Job data holds raw webhook bodies: keep them out of shared caches.
    c.header('Cache-Control', 'no-store');
  });
  // Nothing from another host (bull-board's page links web fonts): src/admin/offline.ts.
  app.use(basePath, selfOnly());
  app.use(`${basePath}/*`, selfOnly());
  // The board's own routes answer `/admin` but not `/admin/` (its <base href>).
  app.get(`${basePath}/`, (c) => c.redirect(basePath));
  // Before the board's routes: its sub-app answers its own UI paths only, but the deliveries paths stay ours.
  const readOnly = opts.readOnly ?? false;
  if (opts.workspaces) {
    mountWorkspaces(app, basePath, opts.workspaces, { readOnly, user: opts.admin.user });
    return true;
  }
  if (opts.history) mountPages(app, basePath, opts, opts.admin.user);
  const queues = opts.queues.map((queue) => ({ queue }));
  app.route(basePath, boardApp(queues, basePath, readOnly, opts.history ? historyLinks(basePath) : []));
  return true;
}
