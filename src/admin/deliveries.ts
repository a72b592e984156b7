import type { Context, Hono } from 'hono';
import { listDeliveries, readTrace, relative, type DeliveryListing, type DeliverySummary } from '../history/index.js';
import { escapeHtml, page, problemList, type HistorySource } from './page.js';
import { mountRerunStart, NO_RERUN_HERE, rerunForm, type AdminRerun } from './rerun.js';
import { readSelection, selectionFields } from './selection.js';
import { stateBadge, timelineHtml } from './timeline.js';

/**
 * The deliveries view beside the board: server-rendered HTML, no script, no
 * asset from elsewhere. Everything shown comes from the history (already
 * masked when written) and is escaped here.
 *
 *   <base>/deliveries                 the list, newest first, with a search form
 *   <base>/deliveries/<key>           the timeline of one delivery (key URL-encoded)
 *   <base>/deliveries/job/<job id>    redirects to the timeline of the job's delivery
 *   <base>/deliveries/rerun           with `rerun`: the plan of a rerun of the deliveries listed, and its start (./rerun.ts)
 */
export function mountDeliveries(app: Hono, basePath: string, history: HistorySource, rerun?: { deps: AdminRerun; by: string }): void {
  const root = `${basePath}/deliveries`;
  app.get(root, (c) => listPage(c, basePath, history, rerun?.deps));
  if (rerun) mountRerunStart(app, basePath, history, rerun.deps, rerun.by);
  app.get(`${root}/`, (c) => c.redirect(root));
  // Job ids hold slashes (d/<key>/<handler>): the parameter takes the rest of the path.
  app.get(`${root}/job/:id{.+}`, async (c) => {
    // A job id pasted as the board shows it (d/<key>/<handler>, its key escaped as %2F, %3A, %25) reaches
    // us as it was typed; one URL-encoded as a whole (our links, the search form) is decoded once.
    const raw = new URL(c.req.url).pathname.slice(`${root}/job/`.length);
    const id = c.req.param('id');
    let trace = await readTrace(history.redis, history.prefix, id);
    if (!trace && raw !== id) trace = await readTrace(history.redis, history.prefix, raw);
    if (!trace) {
      const why = 'unknown, older than HISTORY_TTL, not fanned out yet, or HISTORY=off when it came';
      return c.html(
        page('Not found', basePath, `<p class="empty">Nothing recorded for job <code>${escapeHtml(id)}</code> (${why}).</p>`),
        404,
      );
    }
    return c.redirect(`${root}/${encodeURIComponent(trace.key)}`);
  });
  app.get(`${root}/:key{.+}`, async (c) => {
    const key = c.req.param('key');
    const trace = await readTrace(history.redis, history.prefix, key);
    if (!trace) {
      const why = 'unknown, older than HISTORY_TTL, or HISTORY=off when it came';
      return c.html(
        page('Not found', basePath, `<p class="empty">Nothing recorded for <code>${escapeHtml(key)}</code> (${why}).</p>`),
        404,
      );
    }
    return c.html(page(`Delivery ${trace.key}`, basePath, timelineHtml(trace, root)));
  });
}

async function listPage(c: Context, basePath: string, history: HistorySource, rerun: AdminRerun | undefined): Promise<Response> {
  const root = `${basePath}/deliveries`;
  const job = c.req.query('job')?.trim();
  if (job) return c.redirect(`${root}/job/${encodeURIComponent(job)}`);
  const sel = readSelection((name) => c.req.query(name));
  const jobField = '<label>job id (as the queue board shows it)<input name="job" size="48" placeholder="d/evt_…/handler-id"></label>';
  const form =
    `<form class="search" method="get" action="${escapeHtml(root)}">${selectionFields(sel.values)}` +
    `<button type="submit">Search</button> <a href="${escapeHtml(root)}">clear</a></form>` +
    `<form class="search" method="get" action="${escapeHtml(root)}">${jobField}<button type="submit">Open its timeline</button></form>`;
  if (sel.problems.length) return c.html(page('Deliveries', basePath, `<h1>Deliveries</h1>${form}${problemList(sel.problems)}`), 400);
  const filter = { ...sel.filter, limit: 100 };
  const r = await listDeliveries(history.redis, history.prefix, filter);
  const now = Date.now();
  const rows = r.deliveries.map((d) => rowHtml(d, root, now)).join('');
  const table =
    r.deliveries.length === 0
      ? '<p class="empty">No delivery in the history matches.</p>'
      : `<table class="deliveries"><thead>${DELIVERIES_HEAD}</thead><tbody>${rows}</tbody></table>`;
  const limitReached = r.deliveries.length >= filter.limit;
  const moreText = limitReached
    ? `The newest ${r.deliveries.length} shown; narrow the search for more.`
    : `Stopped after reading ${r.scanned} deliveries; narrow with since for older ones.`;
  const more = r.more ? `<p class="more">${moreText}</p>` : '';
  const content = filter.where ? `<p class="more">${escapeHtml(contentNote(r, filter.where.events))}</p>` : '';
  const again = r.deliveries.length === 0 ? '' : rerun ? rerunForm(rerun, sel.values, root) : NO_RERUN_HERE;
  return c.html(page('Deliveries', basePath, `<h1>Deliveries</h1>${form}${table}${more}${content}${again}`));
}

/** What a content query read, as the CLI's last line says it. */
function contentNote(r: DeliveryListing, events: readonly string[]): string {
  const of = events.length === 1 ? `${events[0]} ` : '';
  let note = `The query box read ${r.scanned} deliveries of the history${r.more ? ' before stopping' : ', all of them'}`;
  if (r.withoutBody > 0) note += `; ${r.withoutBody} ${of}deliveries had no kept body and could not be matched (KEEP_BODIES)`;
  if (r.unreadable > 0) note += `; ${r.unreadable} kept bodies could not be read (written by another version, or damaged)`;
  return `${note}.`;
}

const DELIVERIES_HEAD = '<tr><th>Key</th><th>Event</th><th>Received</th><th>Conversation</th><th>Contact</th><th>Handlers</th></tr>';

function receivedTime(receivedAt: string, now: number): string {
  const ago = `${relative(now - Date.parse(receivedAt)).replace('+', '')} ago`;
  return `<time datetime="${escapeHtml(receivedAt)}" title="${escapeHtml(receivedAt)}">${escapeHtml(ago)}</time>`;
}

function rowHtml(d: DeliverySummary, root: string, now: number): string {
  const handlers =
    d.state === 'invalid' || Object.keys(d.handlers).length === 0
      ? stateBadge(d.state ?? '-')
      : Object.entries(d.handlers)
          .map(([h, s]) => `<span class="handler">${escapeHtml(h)} ${stateBadge(s)}</span>`)
          .join(' ');
  const received = d.receivedAt ? receivedTime(d.receivedAt, now) : '?';
  const href = `${root}/${encodeURIComponent(d.key)}`;
  return (
    `<tr><td><a class="key" href="${escapeHtml(href)}">${escapeHtml(d.key)}</a></td><td>${escapeHtml(d.event ?? '?')}</td>` +
    `<td>${received}</td><td>${escapeHtml(d.conversation ?? '-')}</td><td>${escapeHtml(d.contact ?? '-')}</td><td>${handlers}</td></tr>`
  );
}
