import type { Context, Hono } from 'hono';
import { boardApp, historyLinks } from './board.js';
import { escapeHtml, page } from './page.js';
import { mountPages, type AdminWorkspace } from './pages.js';

/** The pages a workspace is chosen for. */
const PAGES = ['deliveries', 'waits', 'reruns'] as const;

/** Where one workspace's pages and board live: `<basePath>/w/<id>`. */
export const workspaceRoot = (basePath: string, id: string): string => `${basePath}/w/${id}`;

/**
 * The dashboard of a deployment of many: each workspace's pages and a board of its own queues under
 * `<basePath>/w/<id>`; `<basePath>/<page>?workspace=<id>` leads there (without it: a choice of workspace);
 * the board at `basePath` shows every workspace's queues, each as `<id> · <queue>`.
 */
export function mountWorkspaces(
  app: Hono,
  basePath: string,
  list: readonly AdminWorkspace[],
  opts: { readOnly: boolean; user: string },
): void {
  for (const ws of list) mountPages(app, workspaceRoot(basePath, ws.id), ws, opts.user);
  for (const name of PAGES) {
    app.get(`${basePath}/${name}`, (c) => choose(c, basePath, list, name));
    app.get(`${basePath}/${name}/*`, (c) => choose(c, basePath, list, name));
  }
  for (const ws of list) {
    const root = workspaceRoot(basePath, ws.id);
    const queues = ws.queues.map((queue) => ({ queue }));
    app.route(root, boardApp(queues, root, opts.readOnly, ws.history ? historyLinks(root) : []));
  }
  const all = list.flatMap((ws) => ws.queues.map((queue) => ({ queue, workspace: ws.id })));
  const links = list.some((ws) => ws.history) ? historyLinks(basePath) : [];
  app.route(basePath, boardApp(all, basePath, opts.readOnly, links));
}

/** `?workspace=<id>`: on to that workspace's page (the rest of the path and query kept); none or unknown: the choice. */
function choose(c: Context, basePath: string, list: readonly AdminWorkspace[], name: string): Response | Promise<Response> {
  const url = new URL(c.req.url);
  const id = url.searchParams.get('workspace')?.trim();
  const ws = id ? list.find((w) => w.id === id) : undefined;
  if (ws) {
    url.searchParams.delete('workspace');
    const rest = url.pathname.slice(basePath.length);
    const query = url.searchParams.toString();
    return c.redirect(`${workspaceRoot(basePath, ws.id)}${rest}${query ? `?${query}` : ''}`);
  }
  const items = list.map((w) => `<li><a href="${escapeHtml(`${workspaceRoot(basePath, w.id)}/${name}`)}">${escapeHtml(w.id)}</a></li>`);
  const said = id ? `<p class="problems">No workspace has the id <code>${escapeHtml(id)}</code>.</p>` : '';
  const body = `<h1>Choose a workspace</h1>${said}<p>The ${escapeHtml(name)} of which workspace?</p><ul class="workspaces">${items.join('')}</ul>`;
  return c.html(page('Choose a workspace', basePath, body), id ? 404 : 200);
}
